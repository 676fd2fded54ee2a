import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedKey, SmpKeys, type SmpKey } from '../../src/smp/keys.js';
import { SignedAnswerCache } from '../../src/smp/signed-answer-cache.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testCertificate } from '../helpers/certificates.js';
import { addProcessTo, expectValidSignedAnswer, publishedParticipant } from '../helpers/smp.js';

/** A real HTTP cache in front of the registry: Debian's nginx (scripts/install-system-packages.sh installs it). */
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));
const MAX_AGE_SECONDS = 2;
// nginx counts freshness in whole seconds: an answer goes stale up to a second after its max-age.
const BOUND_SECONDS = MAX_AGE_SECONDS + 1;
const HOUR = 3600_000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** nginx as a shared cache that revalidates stale answers with their validator, in a directory of its own. */
function nginxConfig(dir: string, port: number, upstream: string): string {
  const path = (name: string) => join(dir, name);
  return `daemon off;
master_process off;
pid ${path('nginx.pid')};
error_log ${path('error.log')} warn;
events { worker_connections 64; }
http {
  log_format cache '$request_uri $upstream_cache_status $upstream_status';
  access_log ${path('access.log')} cache;
  client_body_temp_path ${path('body')};
  proxy_temp_path ${path('proxy')};
  fastcgi_temp_path ${path('fastcgi')};
  uwsgi_temp_path ${path('uwsgi')};
  scgi_temp_path ${path('scgi')};
  proxy_cache_path ${path('cache')} keys_zone=registry:1m;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass ${upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache registry;
      proxy_cache_revalidate on;
      add_header X-Cache-Status $upstream_cache_status always;
    }
  }
}
`;
}

describe.skipIf(!NGINX)(
  `through nginx as a cache in front${NGINX ? '' : ' (skipped: nginx is missing; scripts/install-system-packages.sh installs it)'}`,
  () => {
    let t: TestApp;
    let dir: string;
    let nginx: ChildProcess;
    let cacheUrl: string;
    let current: SmpKey;
    let next: SmpKey;
    const rolloverAt = Date.now() + HOUR;
    let offset = 0;

    beforeAll(async () => {
      const [first, second] = [await testCertificate('http-cache.test'), await testCertificate('http-cache-next.test')];
      [current, next] = [checkedKey(first.key, first.cert, true), checkedKey(second.key, second.cert, true)];
      const keys = new SmpKeys(current, { key: next, from: rolloverAt }, () => Date.now() + offset);
      t = await startTestApp({
        publicMaxAgeSeconds: MAX_AGE_SECONDS,
        smp: { keys, publicUrl: 'https://smp.example', cache: new SignedAnswerCache() },
      });
      const upstream = await t.app.listen({ port: 0, host: '127.0.0.1' });
      dir = mkdtempSync(join(tmpdir(), 'http-cache-'));
      const port = await freePort();
      writeFileSync(join(dir, 'nginx.conf'), nginxConfig(dir, port, upstream));
      nginx = spawn(NGINX as string, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], {
        stdio: 'ignore',
      });
      cacheUrl = `http://127.0.0.1:${port}`;
      for (let attempt = 0; ; attempt += 1) {
        const up = await fetch(`${cacheUrl}/rest/api/processes`).then(
          () => true,
          () => false,
        );
        if (up) break;
        if (attempt > 100) throw new Error(`nginx did not start: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }, 120_000);
    afterAll(async () => {
      nginx?.kill('SIGTERM');
      await t?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** What the cache answers and how it got it (HIT, MISS, EXPIRED, REVALIDATED), and when the answer arrived. */
    const throughCache = async (path: string) => {
      const answer = await fetch(`${cacheUrl}${path}`);
      expect(answer.status).toBe(200);
      return {
        status: answer.headers.get('x-cache-status'),
        body: Buffer.from(await answer.arrayBuffer()),
        at: Date.now(),
      };
    };
    const upstreamStatuses = (path: string) =>
      readFileSync(join(dir, 'access.log'), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith(`${path} `))
        .map((line) => line.split(' ').slice(1, 3).join(' '));
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    /** Asks through the cache until the answer passes `seen`; the time from `since` it took. */
    async function secondsUntilSeen(path: string, since: number, seen: (body: Buffer) => boolean) {
      for (;;) {
        const answer = await throughCache(path);
        if (seen(answer.body)) return { ...answer, seconds: (answer.at - since) / 1000 };
        // Until then the cache's copy: kept, or revalidated when it went stale while the change was still being heard.
        expect(['HIT', 'REVALIDATED']).toContain(answer.status);
        await sleep(100);
      }
    }

    it('keeps a signed answer for PUBLIC_MAX_AGE_SECONDS, shows a change and a rollover within it, and revalidates with a 304 upstream', async () => {
      const { participant, process, documentType, path } = await publishedParticipant(t);
      const first = await throughCache(path);
      expect(first.status).toBe('MISS');
      await expectValidSignedAnswer(first.body, current.certificatePem);
      expect((await throughCache(path)).status).toBe('HIT');

      // A process added to the participant: seen within the bound, however much of it the kept answer had left.
      const added = await addProcessTo(t, { participant, process }, documentType.identifier);
      const changedAt = Date.now();
      const withProcess = await secondsUntilSeen(path, changedAt, (body) =>
        body.includes(added.qualifiedIdentifier.split('::')[1] as string),
      );
      expect(withProcess.seconds).toBeLessThanOrEqual(BOUND_SECONDS + 0.5);
      expect(withProcess.status).toBe('EXPIRED');
      await expectValidSignedAnswer(withProcess.body, current.certificatePem);

      // Unchanged when it goes stale: the cache asks with its validator, the registry answers 304, the cache keeps its copy.
      await sleep(BOUND_SECONDS * 1000 + 100);
      const revalidated = await throughCache(path);
      expect(revalidated.status).toBe('REVALIDATED');
      expect(revalidated.body.equals(withProcess.body)).toBe(true);
      expect(upstreamStatuses(path).at(-1)).toBe('REVALIDATED 304');

      // The rollover: the next answer after the bound is signed by the next pair.
      offset = 2 * HOUR;
      const rolledAt = Date.now();
      const rolled = await secondsUntilSeen(path, rolledAt, (body) => !body.equals(withProcess.body));
      expect(rolled.seconds).toBeLessThanOrEqual(BOUND_SECONDS + 0.5);
      await expectValidSignedAnswer(rolled.body, next.certificatePem);
      expect(upstreamStatuses(path).slice(0, 2)).toEqual(['MISS 200', 'HIT -']);
      expect(upstreamStatuses(path).at(-1)).toBe('EXPIRED 200');
    }, 60_000);
  },
);
