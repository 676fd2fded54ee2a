import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratedDataDirectory, testDatabaseKind, TEST_DATABASE_URL } from './helpers/database.js';
import { participantForm } from './helpers/participants.js';
import {
  checkoutCopy,
  checkoutFiles,
  runbook,
  runbookSession,
  type Ran,
  type RunbookSession,
} from './helpers/runbooks.js';
import {
  ADMIN_PASSWORD,
  basic,
  call,
  freshStorage,
  provision,
  startService,
  stopService,
  type Actors,
  type RunningService,
  type Storage,
} from './reliability/harness/service.js';

/**
 * The sequences of docs/operations.md, run as written and in the file's order by an operator's shell that set its
 * settings, in a checkout of their own, against real registry processes: backup and restore compared by an export
 * (and a restore that differs failing loudly), the ADMIN password rotated, a development instance reset, instances
 * restarted one at a time, and the metrics and alerts it names present in /metrics. They leave no file in the checkout.
 */
const SLOW = 240_000;
const NEW_PASSWORD = 'rotated-admin-password-2';
const SAME = 'the restored registry holds the same participants';

let work: string;
let checkout: string;
let home: string;
let filesBefore: string[];
const running: RunningService[] = [];
const storages: Storage[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'registry-runbooks-'));
  checkout = checkoutCopy(join(work, 'checkout'));
  home = join(work, 'home');
  await mkdir(home);
  filesBefore = checkoutFiles(checkout);
});
afterAll(async () => {
  for (const service of running) await stopService(service, 'SIGKILL');
  for (const storage of storages) await storage.drop();
  await rm(work, { recursive: true, force: true });
});

/** What the sequences wrote in the operator's backup directory, with its mode and theirs. */
async function backups(): Promise<{ directoryMode: number; files: { name: string; mode: number }[] }> {
  const dir = join(home, 'registry-backups');
  const names = await readdir(dir);
  return {
    directoryMode: (await stat(dir)).mode & 0o777,
    files: await Promise.all(names.map(async (name) => ({ name, mode: (await stat(join(dir, name))).mode & 0o777 }))),
  };
}

async function started(env: Record<string, string>): Promise<RunningService> {
  const service = await startService(env);
  running.push(service);
  return service;
}

async function stopped(service: RunningService): Promise<void> {
  expect(await stopService(service)).toEqual({ code: 0, signal: null });
  running.splice(running.indexOf(service), 1);
}

function succeeded(ran: Ran): string {
  expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0);
  return ran.stdout;
}

/** The databases the block's commands said they used, in order. */
const databasesUsed = (ran: Ran) => [...ran.stderr.matchAll(/^Using (.+)$/gm)].map((match) => match[1]);

/** Participants of the first provider (three unless told), through the API. */
async function someParticipants(service: RunningService, actors: Actors, count = 3): Promise<void> {
  const provider = actors.providers[0] as Actors['providers'][number];
  for (let n = 0; n < count; n += 1) {
    const added = await call(service.url, {
      method: 'POST',
      path: '/rest/api/participants',
      authorization: provider.authorization,
      body: participantForm(),
    });
    expect(added.status, added.body).toBe(201);
  }
}

const participantsOf = async (service: RunningService, actors: Actors) =>
  (await call(service.url, { path: '/rest/api/participants?size=100', authorization: actors.admin })).json<{
    totalElements: number;
  }>().totalElements;

const adminAnswers = async (service: RunningService, password: string) =>
  (await call(service.url, { path: '/rest/api/users?size=1', authorization: basic('admin', password) })).status;

describe.runIf(testDatabaseKind === 'embedded')('the runbooks on the embedded database', () => {
  it(
    'backs up with the server stopped, restores into a new directory that holds the same participants (a check that differs fails), rotates the ADMIN password, resets',
    async () => {
      const session = await runbookSession({ settings: ['settings'], values: { CHECKOUT: checkout }, home });
      // Made migrated (the first start on nothing is first-start.test.ts's); the reset below starts on nothing again.
      const data = await migratedDataDirectory(join(checkout, 'data'));
      const restoredData = join(home, 'registry-restored');
      const original = await started({ REGISTRY_DATA_DIR: data });
      const actors = await provision(original.url);
      await someParticipants(original, actors);
      const count = await participantsOf(original, actors);
      await stopped(original);

      const backedUp = await session.run('embedded-backup');
      expect(succeeded(backedUp)).toMatch(
        /^Backed up the embedded database in .*\/checkout\/data to \S+\/registry-backups\/registry-\d{8}T\d{6}Z\.backup \([\d.]+ MiB\)\.$/m,
      );
      expect(databasesUsed(backedUp)).toEqual([`the embedded database in ${data}`]);
      expect(await backups()).toEqual({
        directoryMode: 0o700,
        files: [{ name: expect.stringMatching(/^registry-\d{8}T\d{6}Z\.backup$/), mode: 0o600 }],
      });
      succeeded(await session.run('embedded-restore'));
      const checked = await session.run('embedded-check');
      expect(succeeded(checked).trim().split('\n').at(-1)).toBe(SAME);
      expect(databasesUsed(checked)).toEqual([
        `the embedded database in ${data}`,
        `the embedded database in ${restoredData}`,
      ]);

      // The restored registry starts, and answers as the original did, signing with the same development key.
      const restored = await started({ REGISTRY_DATA_DIR: restoredData });
      expect(await participantsOf(restored, actors)).toBe(count);
      await stopped(restored);
      const key = 'smp-development-certificate.pem';
      expect(await readFile(join(restoredData, key), 'utf8')).toBe(await readFile(join(data, key), 'utf8'));

      // The original took one more participant since: the check says they differ, and not that they are the same.
      const later = await started({ REGISTRY_DATA_DIR: data });
      await someParticipants(later, actors, 1);
      await stopped(later);
      const differs = await session.run('embedded-check');
      expect(differs.code).toBe(1);
      expect(differs.stdout).not.toContain(SAME);
      expect(`${differs.stdout}${differs.stderr}`).toMatch(/(before|after)\.jsonl.* (differ|after byte)/);

      succeeded(await session.run('rotate-admin-password', { NEW_PASSWORD }));
      const rotated = await started({ REGISTRY_DATA_DIR: data });
      expect([await adminAnswers(rotated, ADMIN_PASSWORD), await adminAnswers(rotated, NEW_PASSWORD)]).toEqual([
        401, 200,
      ]);
      await stopped(rotated);

      succeeded(await session.run('reset-embedded'));
      const reset = await started({ REGISTRY_DATA_DIR: data });
      expect(reset.output.join('\n')).toMatch(/=== Registry ready ===/);
      expect(await adminAnswers(reset, ADMIN_PASSWORD)).toBe(200);
      expect(
        (await call(reset.url, { path: '/rest/api/participants', authorization: actors.providers[0]?.authorization }))
          .status,
      ).toBe(401);
      await stopped(reset);
      expect(checkoutFiles(checkout)).toEqual(filesBefore);
    },
    SLOW,
  );
});

describe.runIf(testDatabaseKind === 'postgres')('the runbooks on PostgreSQL', () => {
  let storage: Storage;
  let session: RunbookSession;
  let first: RunningService;
  let actors: Actors;
  let databaseName: string;

  beforeAll(async () => {
    storage = await freshStorage('postgres');
    storages.push(storage);
    const url = new URL(storage.env.DATABASE_URL as string);
    databaseName = url.pathname.slice(1);
    const restoredUrl = new URL(url);
    restoredUrl.pathname = `/${databaseName}_restored`;
    storages.push({ env: {}, drop: () => dropDatabase(`${databaseName}_restored`) });
    session = await runbookSession({
      settings: ['settings', 'settings-postgres'],
      values: {
        CHECKOUT: checkout,
        DATABASE_URL: url.toString(),
        RESTORED_DATABASE: `${databaseName}_restored`,
        RESTORED_DATABASE_URL: restoredUrl.toString(),
      },
      home,
    });
    first = await started(storage.env);
    actors = await provision(first.url);
    await someParticipants(first, actors);
  }, SLOW);

  it(
    'backs up while the registry runs, into a file its owner alone reads, restores into a new database that holds the same participants',
    async () => {
      succeeded(await session.run('postgres-backup'));
      expect(await backups()).toEqual({
        directoryMode: 0o700,
        files: [{ name: expect.stringMatching(/^registry-\d{8}T\d{6}Z\.backup$/), mode: 0o600 }],
      });
      succeeded(await session.run('postgres-restore'));
      const checked = await session.run('postgres-check');
      expect(succeeded(checked).trim().split('\n').at(-1)).toBe(SAME);
      expect(databasesUsed(checked)).toEqual([
        `PostgreSQL at 127.0.0.1:5432/${databaseName}`,
        `PostgreSQL at 127.0.0.1:5432/${databaseName}_restored`,
      ]);
      const restored = await started({
        DATABASE_URL: storage.env.DATABASE_URL?.replace(databaseName, `${databaseName}_restored`) as string,
      });
      expect(await participantsOf(restored, actors)).toBe(await participantsOf(first, actors));
      await stopped(restored);
    },
    SLOW,
  );

  it(
    'restarts two instances one at a time: the other answers throughout, and each is ready again before the next',
    async () => {
      const instances = [first, await started(storage.env)];
      const admin = basic('admin', ADMIN_PASSWORD);
      for (const turn of [0, 1]) {
        const [restarting, other] = [instances[turn], instances[1 - turn]] as [RunningService, RunningService];
        let answered = 0;
        const failures: string[] = [];
        let restarted = false;
        const load = (async () => {
          while (!restarted) {
            const answer = await call(other.url, { path: '/rest/api/status', authorization: admin }).catch(
              (error: Error) => ({ status: 0, body: error.message }),
            );
            if (answer.status === 200) answered += 1;
            else failures.push(`${answer.status} ${answer.body}`);
          }
        })();
        await stopped(restarting);
        const replacement = await started(storage.env);
        succeeded(await session.run('wait-until-ready', { MANAGEMENT_URL: replacement.managementUrl }));
        restarted = true;
        await load;
        expect(failures.length, failures.slice(0, 3).join('\n')).toBe(0);
        expect(answered).toBeGreaterThan(0);
        const status = (await call(replacement.url, { path: '/rest/api/status', authorization: admin })).json<{
          database: { migration: string; migrationOfThisVersion: string };
        }>();
        expect(status.database.migration).toBe(status.database.migrationOfThisVersion);
        instances[turn] = replacement;
      }
      first = instances[0] as RunningService;
    },
    SLOW,
  );

  it(
    'rotates the ADMIN password beside the running registry, which refuses the old one within moments',
    async () => {
      succeeded(await session.run('rotate-admin-password', { NEW_PASSWORD }));
      await expect.poll(() => adminAnswers(first, ADMIN_PASSWORD), { timeout: 15_000 }).toBe(401);
      expect(await adminAnswers(first, NEW_PASSWORD)).toBe(200);
    },
    SLOW,
  );

  it('names only metrics the registry publishes, in its table and its alerting rules', async () => {
    const metrics = (await call(first.managementUrl, { path: '/metrics' })).body;
    const published = new Set([...metrics.matchAll(/^# TYPE (\w+) /gm)].map((match) => match[1]));
    const operations = await readFile(join(import.meta.dirname, '..', 'docs', 'operations.md'), 'utf8');
    const table = operations.slice(
      operations.indexOf('| Metric |'),
      operations.indexOf('The same as Prometheus alerting rules'),
    );
    const inTable = [...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]);
    const rules = (
      parse(runbook('alerts')) as { groups: { rules: { alert: string; expr: string }[] }[] }
    ).groups.flatMap((group) => group.rules);
    // Metric names have an underscore (labels and PromQL's words here have none, but for histogram_quantile; label matchers are
    // left out); a histogram's series end in _bucket.
    const inRules = rules
      .flatMap((rule) => rule.expr.replace(/\{[^}]*\}/g, '').match(/[a-z][a-z_]*/g) ?? [])
      .filter((word) => word.includes('_') && word !== 'histogram_quantile')
      .map((name) => name.replace(/_bucket$/, ''));
    expect(inTable.length).toBeGreaterThan(6);
    expect(rules.length).toBeGreaterThan(6);
    // The primary's and the standbys' gauges are published with DATABASE_READ_URLS only (test/db/replication.test.ts reads them).
    const withStandbysOnly = (name: string) => /^db_(primary|standby)_/.test(name);
    expect(
      [...inTable, ...inRules].filter((name) => !published.has(name as string) && !withStandbysOnly(name as string)),
    ).toEqual([]);
  });

  it(
    'resets a development database: the next start is a first start',
    async () => {
      for (const service of [...running]) await stopped(service);
      succeeded(await session.run('reset-postgres'));
      const reset = await started(storage.env);
      expect(reset.output.join('\n')).toMatch(/=== Registry ready ===/);
      expect(await adminAnswers(reset, ADMIN_PASSWORD)).toBe(200);
      expect(await participantsOf(reset, { ...actors, admin: basic('admin', ADMIN_PASSWORD) })).toBe(0);
      await stopped(reset);
      expect(checkoutFiles(checkout)).toEqual(filesBefore);
    },
    SLOW,
  );
});

async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
