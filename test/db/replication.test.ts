import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'pg-connection-string';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App, type AppOptions } from '../../src/app.js';
import { ConnectionStringError, connectionTargets, serverNames } from '../../src/db/connection-string.js';
import type { Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { STANDBY_APPLICATION_NAME } from '../../src/db/open.js';
import { openPostgres } from '../../src/db/postgres.js';
import { buildManagementServer } from '../../src/operations/management.js';
import { checkedKey, SmpKeys } from '../../src/smp/keys.js';
import { SignedAnswerCache } from '../../src/smp/signed-answer-cache.js';
import { startTcpProxy, type TcpProxy } from '../reliability/harness/tcp-proxy.js';
import { runServerToEnd } from '../helpers/entry-point.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { accessPointForm, asAdmin, expectStatus } from '../helpers/administration.js';
import { processForm } from '../helpers/catalogue.js';
import { testCertificate } from '../helpers/certificates.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { testDatabaseKind } from '../helpers/database.js';
import { addParticipant, PARTICIPANTS } from '../helpers/participants.js';
import { unique } from '../helpers/requests.js';
import { publishedParticipant } from '../helpers/smp.js';

const PUBLIC_URL = 'https://smp.example';
const STREAM = 'application/vnd.registry.participants.stream.v1+json';

/** Another instance of the service on the cluster: its own pools to the primary and to the standby (at `standbyUrl`). */
async function otherInstance(
  cluster: TestCluster,
  standbyUrl: string,
  maxLagMs: number,
  options: Omit<AppOptions, 'db'> = {},
) {
  const db = openPostgres({ connectionString: cluster.url(cluster.primary) });
  const standby = openPostgres({ connectionString: standbyUrl, applicationName: STANDBY_APPLICATION_NAME });
  const app = await buildApp({
    db,
    standbys: [{ name: 'standby', db: standby }],
    replication: { maxLagMs, checkMs: 100 },
    ...options,
  });
  await app.ready();
  const management = buildManagementServer({ db, metrics: app.metrics, replication: app.replication }).server;
  return {
    app,
    ready: async () => (await management.inject({ method: 'GET', url: '/health/ready' })).json(),
    metrics: async () => (await management.inject({ method: 'GET', url: '/metrics' })).body,
    async close() {
      await app.close();
      await management.close();
      await Promise.all([db.close(), standby.close()]);
    },
  };
}

describe('the settings of a primary and its standbys', () => {
  it('takes a DATABASE_URL of several hosts as one connection string per host, the first that takes writes with target_session_attrs=read-write', () => {
    const targets = connectionTargets(
      'postgres://app:secret@db1:5432,[::1]:5433/registry?application_name=x&target_session_attrs=read-write',
    );
    expect(targets.writable).toBe(true);
    expect(targets.hosts.map(({ url }) => parse(url))).toMatchObject([
      { host: 'db1', port: '5432', database: 'registry', user: 'app', password: 'secret', application_name: 'x' },
      { host: '::1', port: '5433', database: 'registry', user: 'app', password: 'secret', application_name: 'x' },
    ]);
    expect(connectionTargets('postgresql://db1,db2/registry').hosts).toEqual([
      { url: 'postgresql://db1/registry', name: 'db1:5432/registry' },
      { url: 'postgresql://db2/registry', name: 'db2:5432/registry' },
    ]);
    expect(connectionTargets('postgres://app@db1/registry?target_session_attrs=primary').writable).toBe(true);
    const single = 'postgres://app:secret@db1:5432/registry?application_name=x';
    expect(connectionTargets(single)).toEqual({ hosts: [{ url: single, name: 'db1:5432/registry' }], writable: false });
  });

  it('gives every host the whole password, as the driver reads it: the credentials end at the last @', () => {
    const passwords = {
      'Tr0ub4dor@Horse-Battery': 'Tr0ub4dor@Horse-Battery',
      'co:lon': 'co:lon',
      'com,ma': 'com,ma',
      'sla%2Fsh': 'sla/sh',
      'at%40sign': 'at@sign',
      'q%3Fh%23': 'q?h#',
    };
    for (const [written, password] of Object.entries(passwords)) {
      const { hosts } = connectionTargets(
        `postgres://app:${written}@db1:5432,[::1]:5433/registry?target_session_attrs=read-write`,
      );
      expect(
        hosts.map(({ name }) => name),
        written,
      ).toEqual(['db1:5432/registry', '[::1]:5433/registry']);
      expect(
        hosts.map(({ url }) => parse(url)),
        written,
      ).toMatchObject([
        { host: 'db1', user: 'app', password },
        { host: '::1', user: 'app', password },
      ]);
    }
  });

  it('refuses a target_session_attrs it does not implement, or a string the driver cannot read, naming the setting but not the string', () => {
    expect(() => connectionTargets('postgres://db1,db2/registry?target_session_attrs=prefer-standby')).toThrow(
      ConnectionStringError,
    );
    expect(() => connectionTargets('postgres://db1,db2/registry?target_session_attrs=prefer-standby')).toThrow(
      /read-write/,
    );
    const unreadable = () => connectionTargets('postgres://app:pa#ss-word@db1,db2/registry', 'DATABASE_READ_URLS');
    expect(unreadable).toThrow(ConnectionStringError);
    expect(unreadable).toThrow(
      /^DATABASE_READ_URLS is not a connection string the driver reads \(Invalid URL\): percent-encode [^#]* # as %23/,
    );
    expect(unreadable).not.toThrow(/ss-word/);
  });

  it('names a server by its host, port and database, never by its credentials', () => {
    expect(serverNames('postgres://app:secret@standby-1.example:5432/registry?sslmode=disable')).toBe(
      'standby-1.example:5432/registry',
    );
    expect(serverNames('postgres://app:s@cret@db1,db2:5433/registry')).toBe('db1:5432/registry, db2:5433/registry');
    expect(serverNames('postgres://app@localhost/registry?host=/var/run/postgresql')).toBe(
      '/var/run/postgresql:5432/registry',
    );
  });

  it('refuses standbys without a PostgreSQL primary at start, in one line', async () => {
    const finished = await runServerToEnd({
      DATABASE_READ_URLS: 'postgres://127.0.0.1:1/registry',
      REGISTRY_DATA_DIR: join(tmpdir(), `registry-standbys-${process.pid}`),
    });
    expect(finished.code).toBe(1);
    const lines = finished.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      level: 60,
      msg: 'DATABASE_READ_URLS names hot standbys of a PostgreSQL primary: set DATABASE_URL to that primary (the embedded database has no standbys)',
    });
  });
});

describe.runIf(testDatabaseKind === 'postgres')('reads from a hot standby (DATABASE_READ_URLS)', () => {
  let cluster: TestCluster;
  let t: TestApp;
  let standbyDb: Database | undefined;
  let other: Awaited<ReturnType<typeof otherInstance>> | undefined;
  let published: Awaited<ReturnType<typeof publishedParticipant>>;
  let smpKeys: SmpKeys;

  const anonymous = (app: App, url: string) => app.inject({ method: 'GET', url });
  const pauseReplay = async () => {
    await cluster.sql(cluster.standby, 'SELECT pg_wal_replay_pause()');
    await vi.waitFor(async () => {
      const [row] = await cluster.sql<{ state: string }>(
        cluster.standby,
        'SELECT pg_get_wal_replay_pause_state() AS state',
      );
      expect(row?.state).toBe('paused');
    });
  };
  const resumeReplay = () => cluster.sql(cluster.standby, 'SELECT pg_wal_replay_resume()');
  const reading = (app: App) =>
    vi.waitFor(() => expect(app.replication?.status().standbys[0]?.reading).toBe(true), { timeout: 10_000 });

  beforeAll(async () => {
    cluster = await startTestCluster();
    const pems = await testCertificate('standby.example');
    smpKeys = new SmpKeys(checkedKey(pems.key, pems.cert, true));
    const smp = { keys: smpKeys, publicUrl: PUBLIC_URL, cache: new SignedAnswerCache() };
    standbyDb = openPostgres({
      connectionString: cluster.url(cluster.standby),
      applicationName: STANDBY_APPLICATION_NAME,
    });
    // A read-your-writes window as long as the tests pause the standby: this instance keeps it in rotation meanwhile.
    t = await startTestApp(
      { smp, standbys: [{ name: 'standby', db: standbyDb }], replication: { maxLagMs: 60_000, checkMs: 100 } },
      async () => {
        const db = openPostgres({ connectionString: cluster.url(cluster.primary) });
        await migrate(db);
        return db;
      },
    );
    published = await publishedParticipant(t);
    other = await otherInstance(cluster, cluster.url(cluster.standby), 60_000);
    await cluster.replayed();
    await Promise.all([reading(t.app), reading(other.app)]);
  }, 120_000);
  afterAll(async () => {
    await resumeReplay().catch(() => undefined);
    await other?.close();
    await t?.close();
    await standbyDb?.close();
    cluster?.stop();
  });

  it("serves the public reads and the authority's long reads from the standby, as its statistics show, and none from the primary", async () => {
    // A statement of each read, as pg_stat_statements counts it on each server.
    const reads: Array<[string, () => Promise<{ statusCode: number; body: string }>]> = [
      // The service group, the signed lookups and organization processes read the participants held from the standby (a
      // test below); the business card reads it itself.
      [
        'AS "nextDeleteDate"',
        () => anonymous(t.app, `/businesscard/${encodeURIComponent(published.participant.qualifiedIdentifier)}`),
      ],
      [
        'AS total, within',
        () =>
          t.app.inject({ url: '/rest/api/audit?size=1', headers: { authorization: t.users.authority.authorization } }),
      ],
      [
        'AS position, within',
        () => t.app.inject({ url: '/rest/api/changes', headers: { authorization: t.users.authority.authorization } }),
      ],
      [
        'DECLARE registry_stream',
        () =>
          t.app.inject({
            url: PARTICIPANTS,
            headers: { authorization: t.users.authority.authorization, accept: STREAM },
          }),
      ],
    ];
    for (const [statement, read] of reads) {
      const before = await cluster.calls(cluster.standby, statement);
      const response = await read();
      expect(response.statusCode, response.body).toBe(200);
      expect(await cluster.calls(cluster.standby, statement), statement).toBeGreaterThan(before);
      expect(await cluster.calls(cluster.primary, statement), statement).toBe(0);
    }
    expect(await anonymous(t.app, published.path).then((response) => response.body)).toContain(published.endpoint.url);
  });

  it('keeps the caches of its reads as the standby shows them: a change the standby has not replayed is not served, and is once it has', async () => {
    const processUrl = `/rest/api/processes/${published.process.identifier}`;
    const oldTitle = expectStatus(await anonymous(t.app, processUrl), 200).title;
    expect((await anonymous(t.app, published.path)).body).toContain(published.endpoint.url);
    await pauseReplay();
    try {
      const newTitle = unique('Renamed process');
      expectStatus(
        await asAdmin(t).send(
          'PUT',
          processUrl,
          processForm({
            qualifiedIdentifier: published.process.qualifiedIdentifier,
            title: newTitle,
            documentTypes: [{ identifier: published.documentType.identifier }],
          }),
        ),
        200,
      );
      const movedUrl = 'https://moved.example/as4';
      expectStatus(
        await asAdmin(t).send(
          'PUT',
          `/rest/api/accessPoints/${published.accessPoint.identifier}`,
          accessPointForm(published.provider.identifier, published.endpoint.transportProfile.value, {
            title: published.accessPoint.title,
            endpoints: [{ ...published.endpoint, url: movedUrl }],
          }),
        ),
        200,
      );
      // The primary's signal has told both changes: caches that followed it would now load the standby's old rows and keep them.
      expect(expectStatus(await asAdmin(t).get(processUrl), 200).title, 'the writer reads its own write').toBe(
        newTitle,
      );
      expect(expectStatus(await anonymous(t.app, processUrl), 200).title).toBe(oldTitle);
      expect((await anonymous(t.app, published.path)).body).toContain(published.endpoint.url);
      await resumeReplay();
      await vi.waitFor(async () => expect(expectStatus(await anonymous(t.app, processUrl), 200).title).toBe(newTitle), {
        timeout: 5000,
      });
      await vi.waitFor(async () => expect((await anonymous(t.app, published.path)).body).toContain(movedUrl), {
        timeout: 5000,
      });
    } finally {
      await resumeReplay();
    }
  });

  it("lets a provider read its own writes at once, on this instance and on another, while others read the standby's state", async () => {
    const findOwn = (app: App, organization: string, user = t.users.serviceProvider) =>
      app
        .inject({ url: `${PARTICIPANTS}?query=${organization}`, headers: { authorization: user.authorization } })
        .then((response) =>
          expectStatus(response, 200).content.map(
            (participant: { organizationIdentifier: string }) => participant.organizationIdentifier,
          ),
        );
    await pauseReplay();
    try {
      const added = await addParticipant(t.app, t.users.serviceProvider);
      const organization = added.organizationIdentifier;
      expect(await findOwn(t.app, organization)).toEqual([organization]);
      expect(
        await findOwn(t.app, organization, t.users.authority),
        "the authority made no write: its read is the standby's",
      ).toEqual([]);
      const organizationProcesses = `/rest/api/organizations/${encodeURIComponent(added.qualifiedIdentifier)}/processes`;
      expect(
        (await anonymous(t.app, organizationProcesses)).statusCode,
        'the participants held for the public lookup follow the standby',
      ).toBe(404);
      const serviceGroup = `/${encodeURIComponent(added.qualifiedIdentifier)}`;
      expect(
        (await anonymous(t.app, serviceGroup)).statusCode,
        'the participants held for the SMP follow the standby',
      ).toBe(404);
      // The other instance hears the write through the primary's NOTIFY.
      await vi.waitFor(() => expect(other?.app.changes.position).toBeGreaterThanOrEqual(t.app.changes.position));
      expect(await findOwn(other!.app, organization)).toEqual([organization]);
      await resumeReplay();
      await vi.waitFor(
        async () => expect(await findOwn(t.app, organization, t.users.authority)).toEqual([organization]),
        { timeout: 5000 },
      );
      await vi.waitFor(async () => expect((await anonymous(t.app, serviceGroup)).statusCode).toBe(200), {
        timeout: 5000,
      });
      await vi.waitFor(async () => expect((await anonymous(t.app, organizationProcesses)).statusCode).toBe(200), {
        timeout: 5000,
      });
    } finally {
      await resumeReplay();
    }
  });

  it('holds no participant with PARTICIPANT_SEARCH_IN_MEMORY=false: each service group is one statement on the standby', async () => {
    // No kept answers: every lookup is cold.
    const off = await otherInstance(cluster, cluster.url(cluster.standby), 60_000, {
      participantSearchInMemory: false,
      smp: { keys: smpKeys, publicUrl: PUBLIC_URL },
    });
    try {
      await reading(off.app);
      const serviceGroupReads = async () =>
        [
          await cluster.calls(cluster.standby, 'AS receivers'),
          await cluster.calls(cluster.primary, 'AS receivers'),
        ] as const;
      const [standbyBefore, primaryBefore] = await serviceGroupReads();
      for (let lookup = 0; lookup < 5; lookup += 1) {
        const answer = await anonymous(off.app, `/${encodeURIComponent(published.participant.qualifiedIdentifier)}`);
        expect(answer.statusCode, answer.body).toBe(200);
      }
      expect(await serviceGroupReads()).toEqual([standbyBefore + 5, primaryBefore]);
    } finally {
      await off.close();
    }
  });

  describe('a standby out of rotation', () => {
    let proxy: TcpProxy;
    let lagging: Awaited<ReturnType<typeof otherInstance>>;
    const standbyOf = async () => (await lagging.ready()).standbys[0];
    beforeAll(async () => {
      proxy = await startTcpProxy('127.0.0.1', cluster.standby.port);
      lagging = await otherInstance(
        cluster,
        cluster.url(cluster.standby).replace(`:${cluster.standby.port}/`, `:${proxy.port}/`),
        1000,
      );
      await reading(lagging.app);
    });
    afterAll(async () => {
      await lagging?.close();
      await proxy?.close();
    });

    it('takes a standby lagging beyond the bound out of rotation, reads the primary meanwhile, and takes it back once it catches up', async () => {
      expect(await lagging.ready()).toEqual({
        status: 'UP',
        database: 'UP',
        standbys: [{ name: 'standby', state: 'in rotation', lagSeconds: 0, reading: true }],
      });
      await pauseReplay();
      try {
        const capability = expectStatus(
          await asAdmin(t).send('POST', '/rest/api/capabilities', { title: unique('lagging') }),
          201,
        );
        await vi.waitFor(async () => expect(await standbyOf()).toMatchObject({ state: 'lagging', reading: false }), {
          timeout: 5000,
        });
        const lag = (await standbyOf()).lagSeconds;
        expect(lag).toBeGreaterThan(1);
        const metrics = await lagging.metrics();
        expect(metrics).toContain('db_standby_in_rotation{standby="standby"} 0');
        expect(metrics).toMatch(/db_standby_lag_seconds\{standby="standby"\} (\d+\.?\d*)/);
        expect(
          expectStatus(await anonymous(lagging.app, `/rest/api/capabilities/${capability.identifier}`), 200).title,
        ).toBe(capability.title);
        await resumeReplay();
        await vi.waitFor(async () => expect(await standbyOf()).toMatchObject({ state: 'in rotation', reading: true }), {
          timeout: 5000,
        });
        expect(
          expectStatus(await anonymous(lagging.app, `/rest/api/capabilities/${capability.identifier}`), 200).title,
        ).toBe(capability.title);
      } finally {
        await resumeReplay();
      }
    });

    it('takes a standby that stops answering out of rotation without failing a read, and back when it answers again', async () => {
      // A read of the database (organization processes and the service group answer from the participants held).
      const url = `/businesscard/${encodeURIComponent(published.participant.qualifiedIdentifier)}`;
      const { body: expected } = await anonymous(lagging.app, url);
      proxy.cut();
      try {
        const statuses = new Set<number>();
        const started = Date.now();
        while (Date.now() - started < 1500) {
          const response = await anonymous(lagging.app, url);
          statuses.add(response.statusCode);
          expect(response.body).toBe(expected);
        }
        expect([...statuses]).toEqual([200]);
        expect(await standbyOf()).toMatchObject({ state: 'unreachable', reading: false, lagSeconds: null });
        expect((await lagging.ready()).status).toBe('UP');
      } finally {
        proxy.restore();
      }
      await vi.waitFor(async () => expect(await standbyOf()).toMatchObject({ state: 'in rotation', reading: true }), {
        timeout: 5000,
      });
      const after = await anonymous(lagging.app, url);
      expect([after.statusCode, after.body]).toEqual([200, expected]);
    });
  });
});
