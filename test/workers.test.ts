import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testDatabaseKind } from './helpers/database.js';
import { freshDatabaseUrl, runServerToEnd, startFailure, startServer } from './helpers/entry-point.js';

/** One scrape on a connection of its own, so that the cluster may hand it to either worker. */
function scrapePid(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve(/^process_pid (\d+)$/m.exec(body)?.[1] ?? 'none'));
    })
      .on('error', reject)
      .end();
  });
}

describe.runIf(testDatabaseKind === 'postgres')('REGISTRY_WORKERS: several processes on one port', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('serves from two worker processes on PostgreSQL and stops them all on SIGTERM', async () => {
    const database = await freshDatabaseUrl();
    cleanups.push(() => database.drop());
    const server = await startServer({
      DATABASE_URL: database.url,
      REGISTRY_WORKERS: '2',
      REGISTRY_ADMIN_PASSWORD: 'a-long-admin-password',
    });
    cleanups.push(() => server.stop());
    const [, management] = await server.waitFor(/health and metrics on (http:\/\/\S+?)\/health/);
    await server.waitFor(/registry listening[\s\S]*registry listening/);
    const pids = new Set<string>();
    for (let i = 0; i < 40 && pids.size < 2; i += 1) pids.add(await scrapePid(`${management}/metrics`));
    expect(pids.size).toBe(2);
    expect(pids.has(String(server.pid))).toBe(false);
    expect((await fetch(`${server.baseUrl}/rest/api/processes`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    expect(server.output()).not.toMatch(/exited \(/);
  });

  it('refuses more than one worker on the embedded database, saying why', async () => {
    const finished = await runServerToEnd({
      REGISTRY_WORKERS: '2',
      REGISTRY_DATA_DIR: join(tmpdir(), `registry-workers-${process.pid}`),
    });
    expect(startFailure(finished).msg).toMatch(/REGISTRY_WORKERS=2 needs PostgreSQL \(DATABASE_URL\)/);
  });
});
