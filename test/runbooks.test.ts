import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKind, TEST_DATABASE_URL } from './helpers/database.js';
import { participantForm } from './helpers/participants.js';
import { runbook, runRunbook, type Ran } from './helpers/runbooks.js';
import {
  ADMIN_PASSWORD, basic, call, freshStorage, provision, startService, stopService, type Actors, type RunningService, type Storage,
} from './reliability/harness/service.js';

/**
 * The sequences of docs/operations.md, run as written against real registry processes: backup and restore compared
 * by an export, the ADMIN password rotated, a development instance reset, instances restarted one at a time, and
 * the metrics and alerts it names present in /metrics.
 */
const SLOW = 240_000;
const NEW_PASSWORD = 'rotated-admin-password-2';

let work: string;
const running: RunningService[] = [];
const storages: Storage[] = [];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'registry-runbooks-'));
});
afterAll(async () => {
  for (const service of running) await stopService(service, 'SIGKILL');
  for (const storage of storages) await storage.drop();
  await rm(work, { recursive: true, force: true });
});

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

/** Three participants of the first provider, through the API. */
async function someParticipants(service: RunningService, actors: Actors): Promise<void> {
  const provider = actors.providers[0] as Actors['providers'][number];
  for (let n = 0; n < 3; n += 1) {
    const added = await call(service.url, { method: 'POST', path: '/rest/api/participants', authorization: provider.authorization, body: participantForm() });
    expect(added.status, added.body).toBe(201);
  }
}

const participantsOf = async (service: RunningService, actors: Actors) =>
  (await call(service.url, { path: '/rest/api/participants?size=100', authorization: actors.admin })).json<{ totalElements: number }>().totalElements;

const adminAnswers = async (service: RunningService, password: string) =>
  (await call(service.url, { path: '/rest/api/users?size=1', authorization: basic('admin', password) })).status;

describe.runIf(testDatabaseKind === 'embedded')('the runbooks on the embedded database', () => {
  it('backs up with the server stopped, restores into a new directory that holds the same participants, rotates the ADMIN password, resets', async () => {
    const data = join(work, 'data');
    const original = await started({ REGISTRY_DATA_DIR: data });
    const actors = await provision(original.url);
    await someParticipants(original, actors);
    const count = await participantsOf(original, actors);
    await stopped(original);

    const env = { BACKUP_FILE: join(work, 'registry.backup') };
    expect(succeeded(await runRunbook('embedded-backup', { cwd: work, env }))).toMatch(/^Backed up the embedded database in .*\/data to .*registry\.backup \([\d.]+ MiB\)\.$/m);
    expect((await stat(env.BACKUP_FILE)).mode & 0o777).toBe(0o600);
    succeeded(await runRunbook('embedded-restore', { cwd: work, env }));
    expect(succeeded(await runRunbook('embedded-check', { cwd: work, env }))).toContain('the restored registry holds the same participants');
    expect((await readFile(join(work, 'before.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(count);

    // The restored registry starts, and answers as the original did, signing with the same development key.
    const restored = await started({ REGISTRY_DATA_DIR: join(work, 'data-restored') });
    expect(await participantsOf(restored, actors)).toBe(count);
    await stopped(restored);
    const key = 'smp-development-certificate.pem';
    expect(await readFile(join(work, 'data-restored', key), 'utf8')).toBe(await readFile(join(data, key), 'utf8'));

    succeeded(await runRunbook('rotate-admin-password', { cwd: work, env: { NEW_PASSWORD } }));
    const rotated = await started({ REGISTRY_DATA_DIR: data });
    expect([await adminAnswers(rotated, ADMIN_PASSWORD), await adminAnswers(rotated, NEW_PASSWORD)]).toEqual([401, 200]);
    await stopped(rotated);

    succeeded(await runRunbook('reset-embedded', { cwd: work }));
    const reset = await started({ REGISTRY_DATA_DIR: data });
    expect(reset.output.join('\n')).toMatch(/=== Registry ready ===/);
    expect(await adminAnswers(reset, ADMIN_PASSWORD)).toBe(200);
    expect((await call(reset.url, { path: '/rest/api/participants', authorization: actors.providers[0]?.authorization })).status).toBe(401);
    await stopped(reset);
  }, SLOW);
});

describe.runIf(testDatabaseKind === 'postgres')('the runbooks on PostgreSQL', () => {
  let storage: Storage;
  let first: RunningService;
  let actors: Actors;

  beforeAll(async () => {
    storage = await freshStorage('postgres');
    storages.push(storage);
    first = await started(storage.env);
    actors = await provision(first.url);
    await someParticipants(first, actors);
  }, SLOW);

  it('backs up while the registry runs, restores into a new database that holds the same participants', async () => {
    const restoredName = `${new URL(storage.env.DATABASE_URL as string).pathname.slice(1)}_restored`;
    const restoredUrl = new URL(storage.env.DATABASE_URL as string);
    restoredUrl.pathname = `/${restoredName}`;
    storages.push({ env: {}, drop: () => dropDatabase(restoredName) });
    const env = { ...storage.env, BACKUP_FILE: join(work, 'registry.dump'), RESTORED_DATABASE: restoredName, RESTORED_DATABASE_URL: restoredUrl.toString() };
    succeeded(await runRunbook('postgres-backup', { cwd: work, env }));
    succeeded(await runRunbook('postgres-restore', { cwd: work, env }));
    expect(succeeded(await runRunbook('postgres-check', { cwd: work, env }))).toContain('the restored registry holds the same participants');
    const restored = await started({ DATABASE_URL: restoredUrl.toString() });
    expect(await participantsOf(restored, actors)).toBe(await participantsOf(first, actors));
    await stopped(restored);
  }, SLOW);

  it('rotates the ADMIN password beside the running registry, which refuses the old one within moments', async () => {
    succeeded(await runRunbook('rotate-admin-password', { cwd: work, env: { ...storage.env, NEW_PASSWORD } }));
    await expect.poll(() => adminAnswers(first, ADMIN_PASSWORD), { timeout: 15_000 }).toBe(401);
    expect(await adminAnswers(first, NEW_PASSWORD)).toBe(200);
  }, SLOW);

  it('restarts two instances one at a time: the other answers throughout, and each is ready again before the next', async () => {
    const instances = [first, await started(storage.env)];
    const admin = basic('admin', NEW_PASSWORD);
    for (const turn of [0, 1]) {
      const [restarting, other] = [instances[turn], instances[1 - turn]] as [RunningService, RunningService];
      let answered = 0;
      const failures: string[] = [];
      let restarted = false;
      const load = (async () => {
        while (!restarted) {
          const answer = await call(other.url, { path: '/rest/api/status', authorization: admin }).catch((error: Error) => ({ status: 0, body: error.message }));
          if (answer.status === 200) answered += 1;
          else failures.push(`${answer.status} ${answer.body}`);
        }
      })();
      await stopped(restarting);
      const replacement = await started(storage.env);
      succeeded(await runRunbook('wait-until-ready', { cwd: work, env: { MANAGEMENT_URL: replacement.managementUrl } }));
      restarted = true;
      await load;
      expect(failures.length, failures.slice(0, 3).join('\n')).toBe(0);
      expect(answered).toBeGreaterThan(0);
      const status = (await call(replacement.url, { path: '/rest/api/status', authorization: admin })).json<{ database: { migration: string; migrationOfThisVersion: string } }>();
      expect(status.database.migration).toBe(status.database.migrationOfThisVersion);
      instances[turn] = replacement;
    }
    first = instances[0] as RunningService;
  }, SLOW);

  it('names only metrics the registry publishes, in its table and its alerting rules', async () => {
    const metrics = (await call(first.managementUrl, { path: '/metrics' })).body;
    const published = new Set([...metrics.matchAll(/^# TYPE (\w+) /gm)].map((match) => match[1]));
    const operations = await readFile(join(import.meta.dirname, '..', 'docs', 'operations.md'), 'utf8');
    const table = operations.slice(operations.indexOf('| Metric |'), operations.indexOf('The same as Prometheus alerting rules'));
    const inTable = [...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((match) => match[1]);
    const rules = (parse(runbook('alerts')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap((group) => group.rules);
    // Metric names have an underscore (labels and PromQL's words here have none, but for histogram_quantile; label matchers are
    // left out); a histogram's series end in _bucket.
    const inRules = rules.flatMap((rule) => rule.expr.replace(/\{[^}]*\}/g, '').match(/[a-z][a-z_]*/g) ?? [])
      .filter((word) => word.includes('_') && word !== 'histogram_quantile').map((name) => name.replace(/_bucket$/, ''));
    expect(inTable.length).toBeGreaterThan(6);
    expect(rules.length).toBeGreaterThan(6);
    // The primary's and the standbys' gauges are published with DATABASE_READ_URLS only (test/standbys.test.ts reads them).
    const withStandbysOnly = (name: string) => /^db_(primary|standby)_/.test(name);
    expect([...inTable, ...inRules].filter((name) => !published.has(name as string) && !withStandbysOnly(name as string))).toEqual([]);
  });

  it('resets a development database: the next start is a first start', async () => {
    for (const service of [...running]) await stopped(service);
    succeeded(await runRunbook('reset-postgres', { cwd: work, env: storage.env }));
    const reset = await started(storage.env);
    expect(reset.output.join('\n')).toMatch(/=== Registry ready ===/);
    expect(await adminAnswers(reset, ADMIN_PASSWORD)).toBe(200);
    expect(await participantsOf(reset, { ...actors, admin: basic('admin', ADMIN_PASSWORD) })).toBe(0);
    await stopped(reset);
  }, SLOW);
});

async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
