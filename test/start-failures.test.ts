import { mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratedDataDirectory, testDatabaseKind } from './helpers/database.js';
import {
  freshDatabaseUrl,
  programWithoutReferenceData,
  runServerToEnd,
  startFailure,
  startServer,
} from './helpers/entry-point.js';
import { startTcpProxy, type TcpProxy } from './reliability/harness/tcp-proxy.js';

/**
 * A start the operator must fix is one JSON line on standard error that says what is wrong and what is allowed,
 * exit status 1, no stack trace; a PostgreSQL server that does not answer yet is waited for (DATABASE_WAIT_SECONDS).
 * Each through the real server process (src/server.ts).
 */
const SLOW = 120_000;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'registry-start-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

// The settings are read before any database is opened: once, on the embedded database.
describe.runIf(testDatabaseKind === 'embedded')('settings the start refuses', () => {
  it(
    'a PORT out of range, an unknown LOG_LEVEL, several at once: each named with what it allows, no secret repeated',
    async () => {
      const dataDir = join(dir, 'settings');
      const port = startFailure(await runServerToEnd({ REGISTRY_DATA_DIR: dataDir, PORT: '99999' }));
      expect(port).toMatchObject({
        msg: "PORT is '99999': it must be a whole number from 0 to 65535.",
        settings: [{ setting: 'PORT', allowed: 'a whole number from 0 to 65535' }],
      });
      const level = startFailure(await runServerToEnd({ REGISTRY_DATA_DIR: dataDir, LOG_LEVEL: 'loud' }));
      expect(level.msg).toBe("LOG_LEVEL is 'loud': it must be one of fatal, error, warn, info, debug, trace, silent.");
      const several = startFailure(
        await runServerToEnd({
          REGISTRY_DATA_DIR: dataDir,
          LOG_REQUESTS: 'maybe',
          REGISTRY_ADMIN_PASSWORD: 'short-pw',
        }),
      );
      expect(several.msg).toContain("LOG_REQUESTS is 'maybe': it must be true or false.");
      expect(several.msg).toContain('REGISTRY_ADMIN_PASSWORD: it must be a text of at least 12 characters.');
      expect(JSON.stringify(several)).not.toContain('short-pw');
      const smlAlone = startFailure(
        await runServerToEnd({ REGISTRY_DATA_DIR: dataDir, SML_URL: 'http://127.0.0.1:9/' }),
      );
      expect(smlAlone).toMatchObject({
        msg: "SML_URL is set but SML_SMP_ID is not: the SML needs this SMP's identifier; set both, or neither.",
        settings: [{ setting: 'SML_SMP_ID' }],
      });
      const publicUrl = startFailure(
        await runServerToEnd({ REGISTRY_DATA_DIR: dataDir, REGISTRY_PUBLIC_URL: 'smp.example.no' }),
      );
      expect(publicUrl).toMatchObject({
        msg: "REGISTRY_PUBLIC_URL is 'smp.example.no': it must be an absolute http or https URL with no query or fragment, such as https://smp.example.no; the SMP's links start with it.",
        settings: [{ setting: 'REGISTRY_PUBLIC_URL' }],
      });
      // Nothing was made: the settings are refused before the data directory is touched.
      await expect(readdir(dataDir)).rejects.toThrow(/ENOENT/);
    },
    SLOW,
  );

  it(
    'a port in use by another process, and a data directory in use by a running server',
    async () => {
      const other = net.createServer();
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const taken = (other.address() as net.AddressInfo).port;
      const dataDir = await migratedDataDirectory(join(dir, 'ports'));
      try {
        const inUse = startFailure(await runServerToEnd({ REGISTRY_DATA_DIR: dataDir, PORT: String(taken) }));
        expect(inUse.msg).toBe(
          `PORT ${taken} is in use on 127.0.0.1 by another process: stop it, or set PORT to a free port (0 to 65535; 0 takes any free one).`,
        );
        // The data directory was given back: the next start takes it.
        expect(await readdir(dataDir)).not.toContain('registry.lock');
      } finally {
        other.close();
      }
      const running = await startServer({ REGISTRY_DATA_DIR: dataDir });
      try {
        const second = startFailure(await runServerToEnd({ REGISTRY_DATA_DIR: dataDir }));
        expect(second.msg).toMatch(
          new RegExp(
            `is in use by the registry server \\(pid ${running.pid}, since .*\\)\\. Stop it first, or point REGISTRY_DATA_DIR or DATABASE_URL elsewhere\\.$`,
          ),
        );
      } finally {
        expect(await running.stop()).toBe(0);
      }
    },
    SLOW,
  );

  it(
    'a program without its shipped code lists (reference-data/): one plain line, before the database is made',
    async () => {
      const program = await programWithoutReferenceData(join(dir, 'program'));
      const dataDir = join(dir, 'no-reference-data');
      const missing = startFailure(await runServerToEnd({ REGISTRY_DATA_DIR: dataDir }, program));
      expect(missing.msg).toBe(
        `The shipped code lists are missing: ${join(program, 'reference-data', 'peppol-codelists-v9.7', 'participant-identifier-schemes.xml')} ` +
          'is not there. The registry runs from its checkout or release with reference-data/ beside src/ and dist/: restore that directory (git checkout -- reference-data).',
      );
      expect(missing).not.toHaveProperty('err');
      // Refused before the embedded database was opened: at most the SMP's development key was made.
      expect(await readdir(dataDir)).not.toContain('PG_VERSION');
    },
    SLOW,
  );

  it(
    'a management port in use by another process: one line, and the registry never said it listened',
    async () => {
      const other = net.createServer();
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      const taken = (other.address() as net.AddressInfo).port;
      try {
        const finished = await runServerToEnd({
          REGISTRY_DATA_DIR: join(dir, 'management'),
          MANAGEMENT_PORT: String(taken),
        });
        expect(startFailure(finished).msg).toBe(
          `MANAGEMENT_PORT ${taken} is in use on 127.0.0.1 by another process: stop it, or set MANAGEMENT_PORT to a free port (0 to 65535; 0 takes any free one).`,
        );
        expect(finished.stdout).not.toMatch(/listening/);
      } finally {
        other.close();
      }
    },
    SLOW,
  );
});

describe.runIf(testDatabaseKind === 'postgres')('a PostgreSQL server that is missing, not up, or late', () => {
  let proxy: TcpProxy;
  let database: Awaited<ReturnType<typeof freshDatabaseUrl>>;

  beforeAll(async () => {
    database = await freshDatabaseUrl();
    const url = new URL(database.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
  });
  afterAll(async () => {
    await proxy?.close();
    await database?.drop();
  });

  /** The test database's URL through the proxy, with a password the line must never repeat. */
  const throughProxy = () => {
    const url = new URL(database.url);
    url.port = String(proxy.port);
    url.password = 'never-shown-pw';
    return url.toString();
  };

  it(
    'a database that does not exist: at once, naming it, without the password',
    async () => {
      const url = new URL(throughProxy());
      url.pathname = '/no_such_registry_database';
      const started = Date.now();
      const missing = startFailure(await runServerToEnd({ DATABASE_URL: url.toString(), DATABASE_WAIT_SECONDS: '30' }));
      expect(missing.msg).toMatch(
        /^PostgreSQL at 127\.0\.0\.1:\d+\/no_such_registry_database: database "no_such_registry_database" does not exist\. Create it \(createdb\), or correct DATABASE_URL\.$/,
      );
      expect(JSON.stringify(missing)).not.toContain('never-shown-pw');
      // Waiting cannot make a database: no wait.
      expect(Date.now() - started).toBeLessThan(20_000);
    },
    SLOW,
  );

  it(
    'a server that does not answer: waited for DATABASE_WAIT_SECONDS, said while waiting, then one line',
    async () => {
      proxy.cut();
      const started = Date.now();
      const finished = await runServerToEnd({ DATABASE_URL: throughProxy(), DATABASE_WAIT_SECONDS: '2' });
      const elapsed = Date.now() - started;
      expect(startFailure(finished).msg).toMatch(
        /^PostgreSQL at 127\.0\.0\.1:\d+\/test does not answer \(ECONNRESET\), waited 2 s\. Start PostgreSQL or correct DATABASE_URL; DATABASE_WAIT_SECONDS sets how long a start waits for it\.$/,
      );
      expect(elapsed).toBeGreaterThanOrEqual(2000);
      const logged = finished.stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
      expect(logged).toContainEqual(
        expect.objectContaining({
          level: 40,
          reason: 'ECONNRESET',
          msg: expect.stringMatching(
            /^the database does not answer yet \(ECONNRESET\); waiting for it up to \d s more/,
          ),
        }),
      );
      proxy.restore();
    },
    SLOW,
  );

  it(
    'hosts of a multi-host DATABASE_URL that do not answer: waited for, then one line naming each by host and database, never the password',
    async () => {
      const finished = await runServerToEnd({
        DATABASE_URL: 'postgres://registry:Pw@Pw88bb@127.0.0.1:1,127.0.0.1:2/regs?target_session_attrs=read-write',
        DATABASE_WAIT_SECONDS: '1',
      });
      expect(startFailure(finished).msg).toBe(
        'no host of DATABASE_URL takes writes (127.0.0.1:1/regs: connect ECONNREFUSED 127.0.0.1:1; ' +
          '127.0.0.1:2/regs: connect ECONNREFUSED 127.0.0.1:2), waited 1 s. ' +
          'Start its primary (or promote a standby), or correct DATABASE_URL; DATABASE_WAIT_SECONDS sets how long a start waits for it.',
      );
      expect(`${finished.stdout}${finished.stderr}`).not.toContain('Pw88bb');
    },
    SLOW,
  );

  it(
    'a DATABASE_URL the driver cannot read: one line naming the setting, never the string',
    async () => {
      const finished = await runServerToEnd({ DATABASE_URL: 'postgres://registry:pa#ss-word@127.0.0.1:1/regs' });
      expect(startFailure(finished).msg).toMatch(
        /^DATABASE_URL is not a connection string the driver reads \(Invalid URL\): percent-encode/,
      );
      expect(`${finished.stdout}${finished.stderr}`).not.toContain('ss-word');
    },
    SLOW,
  );

  it(
    'a server that comes up while the start waits: the registry starts, and stops with exit status 0',
    async () => {
      proxy.cut();
      const refusedBefore = proxy.refused();
      const starting = startServer({ DATABASE_URL: throughProxy(), DATABASE_WAIT_SECONDS: '60' });
      // Up once the start has found it down (however long the process takes to get there), and a while after.
      await expect.poll(() => proxy.refused(), { timeout: 60_000 }).toBeGreaterThan(refusedBefore);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      proxy.restore();
      const server = await starting;
      expect(server.output()).toMatch(/the database does not answer yet \(ECONNRESET\)/);
      expect((await fetch(`${server.baseUrl}/rest/api/processes`)).status).toBe(200);
      expect(await server.stop()).toBe(0);
    },
    SLOW,
  );
});
