import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalSml, type LocalSml } from '../../dev/local-sml.js';
import {
  ADMIN_PASSWORD,
  basic,
  call,
  startService,
  stopService,
  type Answer,
  type RunningService,
} from '../reliability/harness/service.js';
import { documentTypeForm, processForm } from '../helpers/catalogue.js';
import { testCertificate } from '../helpers/certificates.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { testDatabaseKind } from '../helpers/database.js';
import { participantForm } from '../helpers/participants.js';

const PROVIDER = { username: 'failover-provider', password: 'failover-provider-password' };
const SMP_ID = 'SMP-FAILOVER';

/** What a running loop of requests saw: how many were answered as expected, and every other answer. */
interface Tally {
  ok: number;
  failures: string[];
}

/** Calls `step` over and over until `stopped()`, tallying each outcome. */
async function loop(stopped: () => boolean, tally: Tally, step: () => Promise<void>): Promise<void> {
  while (!stopped()) {
    try {
      await step();
      tally.ok += 1;
    } catch (error) {
      tally.failures.push(error instanceof Error ? error.message : String(error));
    }
  }
}

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  while (!(await condition().catch(() => false))) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(100);
  }
}

// The clusters are PostgreSQL's: nothing of this exists for the embedded database.
describe.runIf(testDatabaseKind === 'postgres')("the primary's loss under a stream of lookups, and a promotion", () => {
  let cluster: TestCluster | undefined;
  let sml: LocalSml | undefined;
  const services: RunningService[] = [];
  const keyDir = mkdtempSync(join(tmpdir(), 'registry-failover-keys-'));
  afterAll(async () => {
    for (const service of services) await stopService(service, 'SIGKILL');
    cluster?.stop();
    await sml?.close();
    rmSync(keyDir, { recursive: true, force: true });
  });

  const admin = basic('admin', ADMIN_PASSWORD);
  const provider = basic(PROVIDER.username, PROVIDER.password);
  const created = async (service: RunningService, path: string, body: unknown, authorization = admin) => {
    const answer = await call(service.url, { method: 'POST', path, authorization, body });
    if (answer.status !== 201) throw new Error(`POST ${path}: ${answer.status} ${answer.body}`);
    return answer.json<{ identifier: string; qualifiedIdentifier: string }>();
  };
  const lookupsOf = (participant: string, documentType: string) => [
    `/${encodeURIComponent(participant)}`,
    `/${encodeURIComponent(participant)}/services/${encodeURIComponent(documentType)}`,
    `/businesscard/${encodeURIComponent(participant)}`,
    // The public lookup page: its heading (name and providers) and its processes.
    `/rest/api/organizations/${encodeURIComponent(participant)}`,
    `/rest/api/organizations/${encodeURIComponent(participant)}/processes`,
  ];
  let documentType: string;
  let process: string;
  let lookups: string[];
  let organization: string;

  beforeAll(async () => {
    // Synchronous replication: nothing a client was told is stored may be lost in the failover.
    cluster = await startTestCluster({ synchronous: true });
    sml = await startLocalSml();
    const pems = await testCertificate('failover.example');
    writeFileSync(join(keyDir, 'key.pem'), pems.key, { mode: 0o600 });
    writeFileSync(join(keyDir, 'certificate.pem'), pems.cert);
    const env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${cluster.primary.port},127.0.0.1:${cluster.standby.port}/registry?target_session_attrs=read-write`,
      DATABASE_READ_URLS: cluster.url(cluster.standby),
      REGISTRY_SMP_KEY_FILE: join(keyDir, 'key.pem'),
      REGISTRY_SMP_CERTIFICATE_FILE: join(keyDir, 'certificate.pem'),
      REGISTRY_PUBLIC_URL: 'https://smp.example',
      LOG_REQUESTS: 'false',
      SML_URL: sml.url,
      SML_SMP_ID: SMP_ID,
    };
    // One after the other: the first makes the first start (migrations, the first admin).
    services.push(await startService(env));
    services.push(await startService(env));
    const [first] = services as [RunningService];
    // The starter catalogue of the first start has the AS4 transport profile.
    const apProvider = await created(first, '/rest/api/access-point-providers', {
      title: 'Failover AP provider',
      contact: { name: 'Ops', email: 'ops@ap.example' },
    });
    const accessPoint = await created(first, '/rest/api/accessPoints', {
      title: 'Failover AP',
      provider: { identifier: apProvider.identifier },
      endpoints: [
        {
          url: 'https://ap.example/as4',
          transportProfile: { value: 'peppol-transport-as4-v2_0' },
          certificate: pems.cert,
        },
      ],
    });
    const added = await created(first, '/rest/api/document-types', documentTypeForm());
    documentType = added.qualifiedIdentifier;
    process = (
      await created(first, '/rest/api/processes', processForm({ documentTypes: [{ identifier: added.identifier }] }))
    ).identifier;
    const serviceProvider = await created(first, '/rest/api/service-providers', {
      title: 'Failover SP',
      accessPoint: { identifier: accessPoint.identifier },
    });
    await created(first, '/rest/api/users', {
      ...PROVIDER,
      role: 'SERVICE_PROVIDER',
      serviceProvider: { identifier: serviceProvider.identifier },
    });
    const participants = [];
    for (let i = 0; i < 3; i += 1)
      participants.push(
        await created(
          first,
          '/rest/api/participants',
          participantForm({ name: 'Failover Bakery AS', processes: [{ identifier: process }] }),
          provider,
        ),
      );
    organization = (participants[0] as { qualifiedIdentifier: string }).qualifiedIdentifier;
    lookups = [
      '/rest/api/processes',
      `/rest/api/processes/${process}`,
      ...participants.flatMap((participant) => lookupsOf(participant.qualifiedIdentifier, documentType)),
    ];
    await cluster.replayed();
  }, 180_000);

  it('answers every lookup from the standby while the primary is gone, refuses writes with 503, and writes again once the standby is promoted', async () => {
    const [first, second] = services as [RunningService, RunningService];
    const readiness = async (service: RunningService) => {
      const answer = await call(service.managementUrl, { path: '/health/ready' });
      return { code: answer.status, ...answer.json<{ status: string }>() };
    };
    for (const service of services)
      await until('the standby in rotation', async () =>
        JSON.stringify(await readiness(service)).includes('"reading":true'),
      );
    // What each lookup answers before the loss, on each instance: it must answer the same throughout.
    const expected = new Map<string, string>();
    for (const service of services) {
      for (const path of lookups) {
        const answer = await call(service.url, { path });
        expect(answer.status, `${path}: ${answer.body}`).toBe(200);
        expected.set(`${service.url}${path}`, answer.body);
      }
    }
    const heading = expected.get(`${first.url}/rest/api/organizations/${encodeURIComponent(organization)}`);
    expect(JSON.parse(heading ?? '{}')).toMatchObject({
      name: 'Failover Bakery AS',
      providers: [{ title: 'Failover SP' }],
    });

    let stopped = false;
    const lookupTally: Tally = { ok: 0, failures: [] };
    let next = 0;
    const lookup = async () => {
      const index = next++;
      const service = services[index % 2] as RunningService;
      const path = lookups[Math.floor(index / 2) % lookups.length] as string;
      const answer = await call(service.url, { path, timeoutMs: 10_000 });
      if (answer.status !== 200 || answer.body !== expected.get(`${service.url}${path}`)) {
        throw new Error(`${path} on ${service.url}: ${answer.status} ${answer.body.slice(0, 200)}`);
      }
    };
    const lookupLoops = Array.from({ length: 4 }, () => loop(() => stopped, lookupTally, lookup));

    // Writes, acknowledged or refused: every acknowledged one must be there after the failover.
    const acknowledged: string[] = [];
    const refusals: Answer[] = [];
    const writeTally: Tally = { ok: 0, failures: [] };
    let writes = 0;
    const write = async () => {
      const service = services[writes++ % 2] as RunningService;
      const answer = await call(service.url, {
        method: 'POST',
        path: '/rest/api/participants',
        authorization: provider,
        body: participantForm(),
        timeoutMs: 10_000,
      });
      if (answer.status === 201) acknowledged.push(answer.json<{ qualifiedIdentifier: string }>().qualifiedIdentifier);
      else if (answer.status === 503) refusals.push(answer);
      else throw new Error(`a write answered ${answer.status} ${answer.body}`);
      await sleep(50);
    };
    const writeLoop = loop(() => stopped, writeTally, write);

    try {
      await until('writes acknowledged', async () => acknowledged.length >= 5);
      const beforeLoss = acknowledged.length;
      cluster?.primary.kill();
      await until('a write refused', async () => refusals.length > 0);
      for (const service of services)
        await until('readiness read-only', async () => (await readiness(service)).status === 'READ_ONLY');
      expect(await readiness(first)).toMatchObject({ code: 200, status: 'READ_ONLY', database: 'DOWN' });
      // Readiness stays 200 by design: what the operators' alert reads (docs/operations.md) is the primary's gauge.
      const primaryUp = async (service: RunningService) =>
        /^db_primary_up (\d)$/m.exec((await call(service.managementUrl, { path: '/metrics' })).body)?.[1];
      await until("the primary's gauge at 0", async () => (await primaryUp(first)) === '0');
      const lookupsAtLoss = lookupTally.ok;
      await sleep(1500);
      expect(lookupTally.ok, 'lookups went on without the primary').toBeGreaterThan(lookupsAtLoss + 20);

      cluster?.standby.promote();
      const acknowledgedBefore = acknowledged.length;
      await until(
        'writes acknowledged again on both instances',
        async () => acknowledged.length >= acknowledgedBefore + 4,
      );
      // Readiness says what its check (each second) last found: the write that found the primary may come first.
      await until('readiness up again', async () => (await readiness(second)).status === 'UP');
      expect(await readiness(second)).toMatchObject({ code: 200, status: 'UP', database: 'UP' });
      await until("the primary's gauge at 1", async () => (await primaryUp(second)) === '1');
      await sleep(500);
      stopped = true;
      await Promise.all([...lookupLoops, writeLoop]);

      expect(lookupTally.failures, 'no failed lookup').toEqual([]);
      expect(writeTally.failures).toEqual([]);
      expect(beforeLoss).toBeGreaterThanOrEqual(5);
      for (const refusal of refusals) {
        expect(refusal.headers['retry-after']).toBe('5');
        expect(refusal.json()).toMatchObject({
          status: 503,
          error: 'Service Unavailable',
          exception: 'ServiceUnavailableError',
          path: '/rest/api/participants',
        });
      }
      // Every write acknowledged before, during and after the failover is there, on the promoted standby.
      for (const participant of acknowledged) {
        const found = await call(second.url, {
          path: `/rest/api/participants/${encodeURIComponent(participant)}`,
          authorization: provider,
        });
        expect(found.status, participant).toBe(200);
      }
      // A participant registered after the promotion is published by both instances (their caches follow the new primary).
      const latest = acknowledged.at(-1) as string;
      for (const service of services) {
        const group = await call(service.url, { path: `/${encodeURIComponent(latest)}` });
        expect(group.status, group.body).toBe(200);
      }
      // The deliveries waited for the primary, then went on from where they were: every one reaches the SML.
      const registered = () => sml?.registrations.get(SMP_ID) ?? new Set<string>();
      await until('every acknowledged participant registered with the SML', async () =>
        acknowledged.every((participant) => registered().has(participant)),
      );
      expect(services.map((service) => service.child.exitCode)).toEqual([null, null]);
      console.log(
        `failover: ${lookupTally.ok} lookups answered, none failed; ${acknowledged.length} writes acknowledged and kept, ${refusals.length} refused with 503`,
      );
    } finally {
      stopped = true;
      await Promise.all([...lookupLoops, writeLoop]);
    }
  }, 120_000);
});
