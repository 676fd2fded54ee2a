import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loggerOptions } from '../../src/operations/logging.js';
import { buildManagementServer } from '../../src/operations/management.js';
import { checkedKey, SmpKeys } from '../../src/smp/keys.js';
import { smpIssuer } from '../../src/status/certificates.js';
import { expiryWarnings } from '../../src/status/expiry-warnings.js';
import {
  add,
  addAccessPointProvider,
  addTransportProfile,
  expectRefused,
  expectStatus,
} from '../helpers/administration.js';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { testCertificate } from '../helpers/certificates.js';
import { testDatabaseKind } from '../helpers/database.js';
import { PROJECT_ROOT } from '../helpers/openapi-tools.js';
import { addParticipant } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';

/**
 * The authority's status read (GET /rest/api/status, every answer checked against the OpenAPI description), the
 * certificate metrics, and the warnings the log gives of certificates that expire soon.
 */
const DAY = 24 * 3600 * 1000;
const SLOW = 60_000;
const STATUS = '/rest/api/status';

let dir: string;
let t: TestApp;
let rolloverAt: number;

const statusAs = async (app: TestApp, user: TestUser = app.users.authority) =>
  expectStatus(await call(app.app, { url: STATUS, user }), 200);
const inDays = (days: number) => new Date(Date.now() + days * DAY);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'registry-status-'));
  const current = await testCertificate('SMP soon', inDays(-1), inDays(20));
  const next = await testCertificate('SMP next', inDays(-1), inDays(400));
  rolloverAt = Date.now() + 5 * DAY;
  const keys = new SmpKeys(checkedKey(current.key, current.cert, false), {
    key: checkedKey(next.key, next.cert, false),
    from: rolloverAt,
  });
  t = await startTestApp({
    smp: { keys, publicUrl: 'https://smp.example.no' },
    // Nobody answers there; the retries wait long enough to leave the deliveries alone.
    sml: {
      url: 'https://operator:sml-secret@127.0.0.1:9/edelivery-sml?token=sml-token',
      smpId: 'STATUS-SMP',
      timeoutMs: 500,
    },
    directory: { url: 'https://indexer:directory-secret@127.0.0.1:9/', timeoutMs: 500 },
    delivery: { retryMs: { first: 600_000, max: 600_000 } },
  });
});
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the status read', () => {
  it('answers ADMIN and REGISTRY_AUTHORITY; a provider is refused, an anonymous caller asked to sign in', async () => {
    await statusAs(t, t.users.admin);
    await statusAs(t, t.users.authority);
    await expectRefused(
      (user) => call(t.app, { url: STATUS, user }),
      [t.users.serviceProvider, t.users.accessPointProvider],
    );
  });

  it('tells the version and commit that run, the database with its last migration, and the uptime', async () => {
    const status = await statusAs(t);
    const { version } = JSON.parse(await readFile(join(PROJECT_ROOT, 'package.json'), 'utf8'));
    const lastMigration = (await readdir(join(PROJECT_ROOT, 'src', 'db', 'migrations')))
      .filter((name) => name.endsWith('.sql'))
      .sort()
      .at(-1);
    expect(status).toMatchObject({
      version,
      commit: execFileSync('git', ['rev-parse', 'HEAD'], { cwd: PROJECT_ROOT }).toString().trim(),
      // The tests run the sources: no build.
      builtAt: null,
      database: { kind: testDatabaseKind, migration: lastMigration, migrationOfThisVersion: lastMigration },
    });
    expect(Date.parse(status.startedAt)).toBeLessThanOrEqual(Date.now());
    expect(status.uptimeSeconds).toBeGreaterThanOrEqual(0);
  });

  it('shows the SMP certificate in use and the next one with its instant; the SML and the Directory without their secrets', async () => {
    const response = await call(t.app, { url: STATUS, user: t.users.authority });
    const status = expectStatus(response, 200);
    expect(status.smp).toEqual({
      publicUrl: 'https://smp.example.no',
      certificate: expect.objectContaining({
        subject: 'CN=SMP soon',
        issuer: 'CN=SMP soon',
        daysLeft: 19,
        development: false,
        issuedBy: 'self_signed',
      }),
      next: expect.objectContaining({
        subject: 'CN=SMP next',
        daysLeft: 399,
        from: new Date(rolloverAt).toISOString(),
      }),
    });
    expect(Date.parse(status.smp.certificate.notAfter)).toBeGreaterThan(Date.now() + 19 * DAY);
    expect(status.sml).toEqual({
      url: 'https://operator@127.0.0.1:9/edelivery-sml',
      smpId: 'STATUS-SMP',
      caPinned: false,
    });
    expect(status.directory).toEqual({ url: 'https://indexer@127.0.0.1:9/' });
    expect(status.clientCertificate).toBeNull();
    expect(response.body).not.toMatch(/sml-secret|sml-token|directory-secret|PRIVATE KEY/);
    // Both deliveries, every field of their state.
    expect(status.deliveries.map((delivery: { target: string }) => delivery.target)).toEqual(['directory', 'sml']);
    expect(Object.keys(status.deliveries[0]).sort()).toEqual([
      'attempts',
      'lastError',
      'lastErrorAt',
      'oldestPendingSeconds',
      'pending',
      'setAside',
      'target',
    ]);
    // The certificate in use expires after the rollover: nothing to warn of.
    expect(status.certificateWarningDays).toBe(30);
    expect(status.expiringCertificates).toEqual([]);
  });

  it("tells a certificate of the Peppol SMP CA (by its issuer's name) from one of another CA and a self-signed one", () => {
    const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe', cwd: dir });
    const issued = (ca: string, subject: string) => {
      openssl(
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        subject,
        '-keyout',
        `${ca}.key`,
        '-out',
        `${ca}.pem`,
      );
      openssl(
        'req',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-subj',
        '/CN=POP000123',
        '-keyout',
        `${ca}-smp.key`,
        '-out',
        `${ca}-smp.csr`,
      );
      openssl(
        'x509',
        '-req',
        '-in',
        `${ca}-smp.csr`,
        '-CA',
        `${ca}.pem`,
        '-CAkey',
        `${ca}.key`,
        '-CAcreateserial',
        '-days',
        '1',
        '-out',
        `${ca}-smp.pem`,
      );
      return readFileSync(join(dir, `${ca}-smp.pem`));
    };
    expect(
      smpIssuer(
        issued('peppol', '/C=BE/O=OpenPEPPOL AISBL/OU=FOR TEST ONLY/CN=PEPPOL SERVICE METADATA PUBLISHER TEST CA - G2'),
      ),
    ).toBe('peppol_smp_ca');
    expect(
      smpIssuer(issued('production', '/C=BE/O=OpenPEPPOL AISBL/CN=PEPPOL SERVICE METADATA PUBLISHER CA - G2')),
    ).toBe('peppol_smp_ca');
    // The access points' CA is Peppol's too, but not the SMPs': no client takes an SMP answer signed with its certificate.
    expect(smpIssuer(issued('ap', '/C=BE/O=OpenPEPPOL AISBL/CN=PEPPOL ACCESS POINT CA - G2'))).toBe('other_ca');
    expect(smpIssuer(issued('lookalike', '/O=Example Ltd/CN=PEPPOL SERVICE METADATA PUBLISHER CA - G2'))).toBe(
      'other_ca',
    );
    expect(smpIssuer(readFileSync(join(dir, 'peppol.pem')))).toBe('self_signed');
  });

  it('counts providers, access points, participants and organizations per network state, exactly and afresh', async () => {
    const before = await statusAs(t);
    expect(before.counts).toMatchObject({ serviceProviders: 2, accessPointProviders: 1, accessPoints: 1 });
    const live = async () =>
      Number((await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM participants'))[0]?.count);
    expect(before.counts.participants).toEqual({ count: await live(), exact: true });
    await addParticipant(t.app, t.users.serviceProvider);
    expect((await statusAs(t)).counts.participants).toEqual({
      count: before.counts.participants.count + 1,
      exact: true,
    });

    await t.db.query(`INSERT INTO sml_participants (participant, state) VALUES
      ('iso6523-actorid-upis::0192:100000008', 'registered'), ('iso6523-actorid-upis::0192:200000005', 'registered'),
      ('iso6523-actorid-upis::0192:300000002', 'held_elsewhere'), ('iso6523-actorid-upis::0192:400000018', 'refused')`);
    await t.db.query(
      `INSERT INTO directory_participants (participant) VALUES ('iso6523-actorid-upis::0192:100000008')`,
    );
    const { counts } = await statusAs(t);
    const exactly = (count: number) => ({ count, exact: true });
    expect(counts.sml).toEqual({
      registered: exactly(2),
      held_elsewhere: exactly(1),
      refused: exactly(1),
      migrating_out: exactly(0),
    });
    expect(counts.directory).toEqual({ pushed: exactly(1) });
  });

  it(
    "beyond 100,000 rows a count is PostgreSQL's estimate, and says so",
    async () => {
      await t.db.query(`INSERT INTO sml_participants (participant, state)
      SELECT 'iso6523-actorid-upis::0192:many-' || n, 'migrating_out' FROM generate_series(1, 120000) n`);
      await t.db.query('ANALYZE sml_participants');
      try {
        const { counts } = await statusAs(t);
        expect(counts.sml.migrating_out.exact).toBe(false);
        expect(counts.sml.migrating_out.count).toBeGreaterThan(100_000);
        expect(Math.abs(counts.sml.migrating_out.count - 120_000)).toBeLessThan(12_000);
        expect(counts.sml.registered).toEqual({ count: 2, exact: true });
      } finally {
        await t.db.query(`DELETE FROM sml_participants WHERE state = 'migrating_out'`);
      }
    },
    SLOW,
  );

  it('lists an access point certificate that expires within 30 days, not one that expires later; the metrics have the days left of each', async () => {
    const soon = await testCertificate('ap-soon.example', inDays(-1), inDays(10));
    const later = await testCertificate('ap-later.example', inDays(-1), inDays(200));
    const provider = await addAccessPointProvider(t);
    const profile = await addTransportProfile(t);
    const endpoint = (url: string, certificate: string) => ({
      url,
      transportProfile: { value: profile.value },
      certificate,
    });
    const accessPoint = await add(t, '/rest/api/accessPoints', {
      title: 'Expiring AP',
      provider: { identifier: provider.identifier },
      endpoints: [
        endpoint('https://ap-soon.example/as4', soon.cert),
        endpoint('https://ap-later.example/as4', later.cert),
      ],
    });
    const status = await statusAs(t);
    expect(status.expiringCertificates).toEqual([
      expect.objectContaining({
        use: 'access_point',
        subject: 'CN=ap-soon.example',
        daysLeft: 9,
        accessPoint: { identifier: accessPoint.identifier, title: 'Expiring AP' },
        endpoint: 'https://ap-soon.example/as4',
      }),
    ]);
    expect(status.counts.accessPoints).toBe(2);

    const management = buildManagementServer({ db: t.db, metrics: t.app.metrics });
    try {
      const metrics = (await management.server.inject({ url: '/metrics' })).body;
      const daysLeft = (labels: string) =>
        Number(new RegExp(`^certificate_days_left\\{${labels}\\} (\\S+)$`, 'm').exec(metrics)?.[1]);
      const ap = (url: string) =>
        `use="access_point",access_point="Expiring AP",access_point_id="${accessPoint.identifier}",endpoint="${url}"`;
      expect(daysLeft(ap('https://ap-soon.example/as4'))).toBeCloseTo(10, 0);
      expect(daysLeft(ap('https://ap-later.example/as4'))).toBeCloseTo(200, 0);
      expect(daysLeft('use="smp",access_point="",access_point_id="",endpoint=""')).toBeCloseTo(20, 0);
      expect(daysLeft('use="smp_next",access_point="",access_point_id="",endpoint=""')).toBeCloseTo(400, 0);
      expect(metrics).toMatch(/^delivery_pending_changes\{target="sml"\} \d+$/m);
      expect(metrics).toMatch(/^delivery_oldest_pending_seconds\{target="sml"\} [\d.]+$/m);
    } finally {
      await management.server.close();
    }
  });
});

describe('a fixed SML and Directory client certificate, and a registry without a signing key', () => {
  let other: TestApp;
  beforeAll(async () => {
    const client = await testCertificate('SML client', inDays(-1), inDays(12));
    await writeFile(join(dir, 'client.pem'), client.cert);
    await writeFile(join(dir, 'client.key'), client.key, { mode: 0o600 });
    other = await startTestApp({
      sml: {
        url: 'https://127.0.0.1:9/',
        smpId: 'OTHER-SMP',
        timeoutMs: 500,
        clientCertificateFile: join(dir, 'client.pem'),
        clientKeyFile: join(dir, 'client.key'),
      },
      delivery: { retryMs: { first: 600_000, max: 600_000 } },
    });
  });
  afterAll(async () => other?.close());

  it('shows the client certificate and lists it when it expires soon; no SMP certificate, no Directory', async () => {
    const status = await statusAs(other);
    expect(status.smp).toEqual({ publicUrl: null, certificate: null, next: null });
    expect(status.clientCertificate).toMatchObject({ subject: 'CN=SML client', daysLeft: 11 });
    expect(status.directory).toBeNull();
    expect(status.counts.directory).toBeNull();
    expect(status.expiringCertificates).toEqual([
      expect.objectContaining({ use: 'client', subject: 'CN=SML client', daysLeft: 11 }),
    ]);
  });
});

describe("the log's warnings of certificates that expire soon", () => {
  it(
    'warns at the start of each certificate in use that expires within CERTIFICATE_WARNING_DAYS, then again every day',
    async () => {
      const alone = await testCertificate('SMP alone', inDays(-1), inDays(20));
      const lines: string[] = [];
      const keys = new SmpKeys(checkedKey(alone.key, alone.cert, false));
      const app = await startTestApp();
      const logged = await buildApp({
        db: app.db,
        smp: { keys },
        certificateWarningDays: 21,
        logger: loggerOptions('info', { write: (line: string) => void lines.push(line) }),
      });
      try {
        await logged.ready();
        await expect
          .poll(() => lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 40 && entry.certificate))
          .toEqual([
            expect.objectContaining({
              msg: expect.stringMatching(/^the SMP certificate expires on \S+, in 19 days: CN=SMP alone$/),
              certificate: expect.objectContaining({ use: 'smp', subject: 'CN=SMP alone', daysLeft: 19 }),
            }),
          ]);
        // Within a narrower window, nothing: the setting decides.
        const quiet: unknown[] = [];
        const narrow = expiryWarnings({ keys, catalogue: logged.catalogue }, 10, {
          warn: (...args: unknown[]) => quiet.push(args),
        } as unknown as FastifyBaseLogger);
        narrow.start();
        await new Promise((resolve) => setTimeout(resolve, 200));
        narrow.stop();
        expect(quiet).toEqual([]);

        // Every day: a day is 50 ms here.
        const daily: string[] = [];
        const repeated = expiryWarnings(
          { keys, catalogue: logged.catalogue },
          30,
          { warn: (_: unknown, message: string) => void daily.push(message) } as unknown as FastifyBaseLogger,
          50,
        );
        repeated.start();
        await expect.poll(() => daily.length).toBeGreaterThanOrEqual(3);
        repeated.stop();
        expect(new Set(daily).size).toBe(1);
      } finally {
        await logged.close();
        await app.close();
      }
    },
    SLOW,
  );
});
