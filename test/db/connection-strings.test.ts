import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalServer } from '../../dev/local-cluster.js';
import {
  ADMIN_PASSWORD,
  basic,
  call,
  startService,
  stopService,
  type RunningService,
} from '../reliability/harness/service.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { testDatabaseKind } from '../helpers/database.js';
import { runServerToEnd, startFailure } from '../helpers/entry-point.js';
import { unique } from '../helpers/requests.js';

/**
 * Connection strings as the driver reads them, through the real server process on a real primary and standby whose
 * role signs in with a password (scram-sha-256) that holds an `@`: the credentials end at the last `@`.
 */
const ROLE = 'registry_app';
const PASSWORD = 'Tr0ub4dor@Horse-Battery';
/** Any part of the password a parser cut at its first `@` would show. */
const PASSWORD_PARTS = /Tr0ub4dor|Horse-Battery/;

describe.runIf(testDatabaseKind === 'postgres')('a password that holds an @', () => {
  let cluster: TestCluster;
  const running: RunningService[] = [];
  const urlOf = (...servers: LocalServer[]) =>
    `postgres://${ROLE}:${PASSWORD}@${servers.map((server) => `127.0.0.1:${server.port}`).join(',')}/registry`;
  const nameOf = (server: LocalServer) => `127.0.0.1:${server.port}/registry`;
  const start = async (env: Record<string, string>) => {
    const service = await startService({ LOG_REQUESTS: 'false', ...env });
    running.push(service);
    return service;
  };

  beforeAll(async () => {
    cluster = await startTestCluster();
    await cluster.addPasswordRole(ROLE, PASSWORD);
    // The role signs in with its password only: a cut one is refused, as an operator's would be.
    const cut = new pg.Client({
      connectionString: `postgres://${ROLE}:Tr0ub4dor@127.0.0.1:${cluster.standby.port}/registry`,
    });
    await expect(cut.connect()).rejects.toThrow(/password authentication failed/);
  }, 120_000);
  afterEach(async () => {
    for (const service of running.splice(0)) await stopService(service);
  });
  afterAll(() => cluster?.stop());

  it('names a standby of DATABASE_READ_URLS by host and database in readiness, the metrics and the log, and reads from it', async () => {
    const service = await start({
      DATABASE_URL: cluster.url(cluster.primary),
      DATABASE_READ_URLS: urlOf(cluster.standby),
    });
    const ready = async () =>
      (await call(service.managementUrl, { path: '/health/ready' })).json<{ standbys: unknown[] }>();
    await vi.waitFor(
      async () =>
        expect((await ready()).standbys).toEqual([
          { name: nameOf(cluster.standby), state: 'in rotation', lagSeconds: expect.any(Number), reading: true },
        ]),
      { timeout: 20_000 },
    );
    const metrics = (await call(service.managementUrl, { path: '/metrics' })).body;
    expect(metrics).toContain(`db_standby_in_rotation{standby="${nameOf(cluster.standby)}"} 1`);
    await vi.waitFor(() =>
      expect(service.output.join('\n')).toContain(`"msg":"standby ${nameOf(cluster.standby)} in rotation"`),
    );
    expect(metrics).not.toMatch(PASSWORD_PARTS);
    expect(JSON.stringify(await ready())).not.toMatch(PASSWORD_PARTS);
    expect(service.output.join('\n')).not.toMatch(PASSWORD_PARTS);
  }, 120_000);

  it('signs in to every host of a multi-host DATABASE_URL, the primary listed after a standby', async () => {
    const service = await start({
      DATABASE_URL: `${urlOf(cluster.standby, cluster.primary)}?target_session_attrs=read-write`,
    });
    const added = await call(service.url, {
      method: 'POST',
      path: '/rest/api/capabilities',
      authorization: basic('admin', ADMIN_PASSWORD),
      body: { title: unique('written through the second host') },
    });
    expect(added.status, added.body).toBe(201);
    const [row] = await cluster.sql<{ sessions: number }>(
      cluster.primary,
      `SELECT count(*)::int AS sessions FROM pg_stat_activity WHERE usename = '${ROLE}'`,
    );
    expect(row?.sessions).toBeGreaterThan(0);
    expect(service.output.join('\n')).not.toMatch(PASSWORD_PARTS);
  }, 120_000);

  it('a DATABASE_URL none of whose hosts takes writes: waited for, then one line naming each host', async () => {
    const finished = await runServerToEnd({
      DATABASE_URL: `${urlOf(cluster.standby)}?target_session_attrs=read-write`,
      DATABASE_WAIT_SECONDS: '1',
    });
    expect(startFailure(finished).msg).toBe(
      `no host of DATABASE_URL takes writes (${nameOf(cluster.standby)} takes no writes), waited 1 s. ` +
        'Start its primary (or promote a standby), or correct DATABASE_URL; DATABASE_WAIT_SECONDS sets how long a start waits for it.',
    );
    expect(`${finished.stdout}${finished.stderr}`).not.toMatch(PASSWORD_PARTS);
  }, 120_000);
});
