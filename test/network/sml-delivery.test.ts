import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { startLocalSml, type LocalSml } from '../../dev/local-sml.js';
import type { LocalDirectory } from '../../dev/local-directory.js';
import { MIGRATION_KEY_PATTERN, smlClient } from '../../src/network/sml-client.js';
import { reconcileSml } from '../../src/network/reconcile.js';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import { call } from '../helpers/requests.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectStatus } from '../helpers/administration.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { addParticipant as addAnyParticipant, PARTICIPANTS, uniqueOrganization } from '../helpers/participants.js';
import { checkResponsesAgainstDescription } from '../helpers/openapi-responses.js';
import { TEST_DATABASE_URL, testDatabaseKind } from '../helpers/database.js';
import { addServed, deliveryOptions, SMP_ID, useDeliveryTestApp, type DeliveryTestApp } from '../helpers/delivery.js';
import type { TestUser } from '../helpers/app.js';

let t: TestApp;
let sml: LocalSml;
let directory: LocalDirectory;
let app: App;
let served: DeliveryTestApp['served'];
useDeliveryTestApp((started) => ({ t, sml, directory, app, served } = started), checkResponsesAgainstDescription);
/** A participant with a process: it serves its organization, and has its say over its registration. */
const addParticipant = (on: App, user: TestUser, overrides: Record<string, unknown> = {}) =>
  addServed(on, user, served, overrides);
afterEach(() => {
  sml.fail('none');
  directory.fail('none');
});

const held = () => sml.registrations.get(SMP_ID) ?? new Set<string>();
interface Status {
  target: string;
  pending: number;
  setAside: number;
  attempts: number;
  lastError: string | null;
}
const statuses = async (): Promise<Status[]> =>
  expectStatus(
    await t.app.inject({
      method: 'GET',
      url: '/rest/api/deliveries',
      headers: { authorization: t.users.authority.authorization },
    }),
    200,
  );
const status = async (target = 'sml') => (await statuses()).find((entry) => entry.target === target) as Status;
const delivered = () =>
  vi.waitFor(
    async () => {
      const all = await statuses();
      expect(all.map((entry) => entry.target)).toEqual(['directory', 'sml']);
      // Nothing set aside either: a call slowed by a loaded machine can set one aside for a moment.
      expect(all.map((entry) => [entry.pending, entry.setAside])).toEqual([
        [0, 0],
        [0, 0],
      ]);
    },
    { timeout: 10_000, interval: 50 },
  );

describe('delivery to the SML', () => {
  it('registers an organization on its first participant, keeps it through a transfer, deletes it with the last', async () => {
    const calls = { ...sml.calls };
    const first = await addParticipant(app, t.users.serviceProvider);
    await delivered();
    expect(held().has(first.qualifiedIdentifier)).toBe(true);
    // A second provider serves the same organization: still one registration.
    const second = await addAnyParticipant(app, t.users.otherServiceProvider, {
      organizationIdentifier: first.organizationIdentifier,
    });
    const url = `${PARTICIPANTS}/${first.qualifiedIdentifier}`;
    expectStatus(
      await call(app, {
        method: 'DELETE',
        url: `${PARTICIPANTS}/${second.identifier}`,
        user: t.users.otherServiceProvider,
      }),
      204,
    );
    expect(
      (
        await call(app, {
          method: 'PUT',
          url: `${url}/transfer/${t.fixture.otherServiceProviderId}`,
          user: t.users.serviceProvider,
        })
      ).statusCode,
    ).toBe(200);
    await delivered();
    expect(held().has(first.qualifiedIdentifier)).toBe(true);
    expect(sml.calls.create - calls.create).toBe(1);
    expect(sml.calls.delete - calls.delete).toBe(0);
    expectStatus(await call(app, { method: 'DELETE', url, user: t.users.otherServiceProvider }), 204);
    await delivered();
    expect(held().has(first.qualifiedIdentifier)).toBe(false);
    expect(sml.calls.delete - calls.delete).toBe(1);
  });

  for (const failure of ['fault', 'timeout', 'refuse'] as const) {
    it(`loses nothing while the SML fails (${failure}) and delivers everything, once, when it recovers`, async () => {
      const calls = { ...sml.calls };
      sml.fail(failure);
      const added = [];
      for (let index = 0; index < 5; index += 1) added.push(await addParticipant(app, t.users.serviceProvider));
      const gone = added.pop();
      expectStatus(
        await call(app, {
          method: 'DELETE',
          url: `${PARTICIPANTS}/${gone?.qualifiedIdentifier}`,
          user: t.users.serviceProvider,
        }),
        204,
      );
      await vi.waitFor(async () => expect((await status()).attempts).toBeGreaterThan(1), { timeout: 10_000 });
      const failing = await status();
      expect(failing.pending).toBeGreaterThanOrEqual(6);
      expect(failing.lastError).toMatch(failure === 'fault' ? /fault.*InternalError/ : /SML/);
      const metrics = await app.metrics.metrics();
      expect(metrics).toMatch(/delivery_pending_changes\{target="sml"\} [1-9]/);
      sml.fail('none');
      await delivered();
      for (const participant of added) expect(held().has(participant.qualifiedIdentifier)).toBe(true);
      expect(held().has(gone?.qualifiedIdentifier ?? '')).toBe(false);
      // The one whose delete came before any delivery was never registered: nothing to delete either.
      expect(sml.calls.create - calls.create).toBe(4);
      expect(sml.calls.delete - calls.delete).toBe(0);
      expect((await status()).attempts).toBe(0);
    });
  }

  it('lists what the SML holds for this SMP: what the registry believes it registered', async () => {
    await delivered();
    const listed = await smlClient({ url: sml.url, smpId: SMP_ID }).list();
    const [{ count }] = (await t.db.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM sml_participants WHERE state = 'registered'`,
    )) as [{ count: number }];
    expect(new Set(listed)).toEqual(held());
    expect(listed).toHaveLength(count);
  });
});

interface NetworkState {
  sml: {
    state: string | null;
    since: string | null;
    lastError: { fault: string | null; code: string | null; message: string } | null;
  };
  directory: { state: string | null; since: string | null };
}
const networkOf = async (participant: { identifier: string }, user = t.users.serviceProvider): Promise<NetworkState> =>
  expectStatus(await call(app, { url: `${PARTICIPANTS}/${participant.identifier}/network`, user }), 200);
const stuck = async (): Promise<Array<{ participant: string; state: string }>> =>
  expectStatus(await call(app, { url: '/rest/api/deliveries/participants', user: t.users.authority }), 200);
const OTHER_SMP = 'other-smp';

describe('refusals of the SML that no retry can cure', () => {
  it('records an organization another SMP holds, and delivers its neighbours in the cursor (SML and Directory)', async () => {
    await delivered();
    const taken = `iso6523-actorid-upis::0192:${uniqueOrganization()}`;
    sml.registrations.set(OTHER_SMP, new Set([taken]));
    const before = await addParticipant(app, t.users.serviceProvider);
    const held = await addParticipant(app, t.users.serviceProvider, {
      organizationIdentifier: taken.split(':').at(-1),
    });
    const after = await addParticipant(app, t.users.serviceProvider);
    await delivered();
    for (const neighbour of [before, after]) {
      expect(sml.registrations.get(SMP_ID)?.has(neighbour.qualifiedIdentifier)).toBe(true);
      expect(directory.indexed.has(neighbour.qualifiedIdentifier)).toBe(true);
      expect(await networkOf(neighbour)).toMatchObject({
        sml: { state: 'registered', lastError: null },
        directory: { state: 'pushed' },
      });
    }
    expect((await status()).attempts).toBe(0);
    // Neither registered nor pushed: the Directory would index another SMP's organization as ours.
    expect(sml.registrations.get(SMP_ID)?.has(taken)).toBe(false);
    expect(directory.indexed.has(taken)).toBe(false);
    const network = await networkOf(held);
    expect(network).toMatchObject({
      sml: { state: 'held_elsewhere', lastError: { fault: 'BadRequestFault', code: 'ERR-106' } },
      directory: { state: 'waiting_for_sml' },
    });
    expect(network.sml.lastError?.message).toMatch(/already exist/);
    expect(await networkOf(held, t.users.authority)).toEqual(network);
    expectStatus(
      await call(app, { url: `${PARTICIPANTS}/${held.identifier}/network`, user: t.users.otherServiceProvider }),
      404,
    );
    expect(await stuck()).toContainEqual(expect.objectContaining({ participant: taken, state: 'held_elsewhere' }));

    // The other SMP lets it go; the participant's next change registers it and pushes it.
    sml.registrations.get(OTHER_SMP)?.delete(taken);
    expectStatus(
      await call(app, {
        method: 'PUT',
        url: `${PARTICIPANTS}/${held.identifier}`,
        user: t.users.serviceProvider,
        payload: { ...served, contact: { name: 'Taken Back' } },
      }),
      200,
    );
    await delivered();
    expect(sml.registrations.get(SMP_ID)?.has(taken)).toBe(true);
    expect(directory.indexed.has(taken)).toBe(true);
    expect(await networkOf(held)).toMatchObject({
      sml: { state: 'registered', lastError: null },
      directory: { state: 'pushed' },
    });
    expect(await stuck()).not.toContainEqual(expect.objectContaining({ participant: taken }));
  });

  it('takes a refused Create of an identifier the SML lists under this SMP as done (our own answer was lost)', async () => {
    await delivered();
    const calls = { ...sml.calls };
    const organizationIdentifier = uniqueOrganization();
    held().add(`iso6523-actorid-upis::0192:${organizationIdentifier}`);
    const participant = await addParticipant(app, t.users.serviceProvider, { organizationIdentifier });
    await delivered();
    expect(sml.calls.refused - calls.refused).toBe(1);
    expect(await networkOf(participant)).toMatchObject({
      sml: { state: 'registered', lastError: null },
      directory: { state: 'pushed' },
    });
  });

  it('takes a Delete the SML answers with its NotFoundFault (ERR-100) as done, and goes on', async () => {
    const gone = await addParticipant(app, t.users.serviceProvider);
    await delivered();
    const calls = { ...sml.calls };
    // The SML lost it (or an earlier Delete whose answer was lost removed it).
    held().delete(gone.qualifiedIdentifier);
    expectStatus(
      await call(app, { method: 'DELETE', url: `${PARTICIPANTS}/${gone.identifier}`, user: t.users.serviceProvider }),
      204,
    );
    const next = await addParticipant(app, t.users.serviceProvider);
    await delivered();
    expect(sml.calls.refused - calls.refused).toBe(1);
    expect((await status()).attempts).toBe(0);
    expect(held().has(next.qualifiedIdentifier)).toBe(true);
  });

  it('shows a participant pending, since its change, with the error of the failing SML, until it is delivered', async () => {
    await delivered();
    sml.fail('fault');
    const participant = await addParticipant(app, t.users.serviceProvider);
    await vi.waitFor(async () => expect((await status()).attempts).toBeGreaterThan(0), { timeout: 10_000 });
    const network = await networkOf(participant);
    expect(network).toMatchObject({
      sml: {
        state: 'pending',
        lastError: { fault: null, message: expect.stringMatching(/InternalErrorFault.*ERR-105/) },
      },
      directory: { state: 'pending' },
    });
    expect(Date.parse(network.sml.since ?? '')).toBeLessThanOrEqual(Date.now());
    expect(await stuck()).toContainEqual(
      expect.objectContaining({ participant: participant.qualifiedIdentifier, state: 'pending' }),
    );
    sml.fail('none');
    await delivered();
    expect(await networkOf(participant)).toMatchObject({
      sml: { state: 'registered' },
      directory: { state: 'pushed' },
    });
  });
});

describe('migration in: taking an organization over from another SMP', () => {
  const KEY = 'aB3$cD4%eF5^gH6!';
  const giveKey = (participant: { identifier: string }, migrationKey: string) =>
    call(app, {
      method: 'PUT',
      url: `${PARTICIPANTS}/${participant.identifier}/migration-key`,
      user: t.users.serviceProvider,
      payload: { migrationKey },
    });
  const heldByOther = async () => {
    const taken = `iso6523-actorid-upis::0192:${uniqueOrganization()}`;
    sml.registrations.set(OTHER_SMP, new Set([...(sml.registrations.get(OTHER_SMP) ?? []), taken]));
    await smlClient({ url: sml.url, smpId: OTHER_SMP }).prepareToMigrate(taken, KEY);
    const participant = await addParticipant(app, t.users.serviceProvider, {
      organizationIdentifier: taken.split(':').at(-1),
    });
    await delivered();
    expect(await networkOf(participant)).toMatchObject({ sml: { state: 'held_elsewhere' } });
    return { taken, participant };
  };

  it('with the right key: Migrate, not Create; registered, pushed, and logged as a migration without the key', async () => {
    const { taken, participant } = await heldByOther();
    const calls = { ...sml.calls };
    expect((await giveKey(participant, KEY)).statusCode).toBe(200);
    await delivered();
    expect(sml.calls.migrate - calls.migrate).toBe(1);
    expect(sml.calls.create - calls.create).toBe(0);
    expect(held().has(taken)).toBe(true);
    expect(sml.registrations.get(OTHER_SMP)?.has(taken)).toBe(false);
    expect(await networkOf(participant)).toMatchObject({
      sml: { state: 'registered', lastError: null },
      directory: { state: 'pushed' },
    });
    const audit = await call(app, {
      url: `/rest/api/audit?identifier=${encodeURIComponent(taken)}&operation=migrate`,
      user: t.users.authority,
    });
    expect(expectStatus(audit, 200).content).toHaveLength(1);
    expect(audit.body).not.toContain(KEY);
    // Registered now: a key has nothing left to do.
    expectStatus(await giveKey(participant, KEY), 409);
  });

  it("with a wrong key: the participant shows the SML's refusal and nothing else waits; a malformed key is a 400", async () => {
    const { taken, participant } = await heldByOther();
    expect((await giveKey(participant, 'zY9#xW8@vU7!')).statusCode).toBe(200);
    const neighbour = await addParticipant(app, t.users.serviceProvider);
    await delivered();
    expect(held().has(neighbour.qualifiedIdentifier)).toBe(true);
    expect(sml.registrations.get(OTHER_SMP)?.has(taken)).toBe(true);
    expect(await networkOf(participant)).toMatchObject({
      sml: { state: 'refused', lastError: { fault: 'NotFoundFault', code: 'ERR-100' } },
      directory: { state: 'waiting_for_sml' },
    });
    expect((await status()).attempts).toBe(0);
    expectStatus(await giveKey(participant, 'too-simple'), 400);
    expectStatus(
      await call(app, {
        method: 'PUT',
        url: `${PARTICIPANTS}/${participant.identifier}/migration-key`,
        user: t.users.otherServiceProvider,
        payload: { migrationKey: KEY },
      }),
      404,
    );
    // The right key afterwards takes it over.
    expect((await giveKey(participant, KEY)).statusCode).toBe(200);
    await delivered();
    expect(await networkOf(participant)).toMatchObject({ sml: { state: 'registered' } });
  });
});

describe('migration out: another SMP takes an organization over', () => {
  const migrationOut = (participant: { identifier: string }, method: 'POST' | 'DELETE' = 'POST') =>
    call(app, {
      method,
      url: `${PARTICIPANTS}/${participant.identifier}/migration-out`,
      user: t.users.serviceProvider,
    });
  const otherSmp = () => smlClient({ url: sml.url, smpId: OTHER_SMP });
  const registered = async () => {
    const participant = await addParticipant(app, t.users.serviceProvider);
    await delivered();
    return participant;
  };

  it('gives a key the SML accepts, serves the organization until the other SMP migrates it, then ends it as a migration', async () => {
    const participant = await registered();
    const organization = participant.qualifiedIdentifier;
    const { migrationKey } = expectStatus(await migrationOut(participant), 201) as { migrationKey: string };
    expect(migrationKey).toMatch(MIGRATION_KEY_PATTERN);
    expect(await networkOf(participant)).toMatchObject({
      sml: { state: 'migrating_out' },
      directory: { state: 'pushed' },
    });
    // Served as usual meanwhile: a change is delivered and leaves the migration as it is.
    const stillHere = expectStatus(
      await call(app, {
        method: 'PUT',
        url: `${PARTICIPANTS}/${participant.identifier}`,
        user: t.users.serviceProvider,
        payload: { ...served, contact: { name: 'Still Here' } },
      }),
      200,
    );
    expect(stillHere.processes).not.toEqual([]);
    await delivered();
    expect(await networkOf(participant)).toMatchObject({ sml: { state: 'migrating_out' } });
    expect((await reconcileSml(t.db, smlClient({ url: sml.url, smpId: SMP_ID }))).migrated).toEqual([]);

    await otherSmp().migrate(organization, migrationKey);
    const calls = { ...sml.calls };
    expect((await reconcileSml(t.db, smlClient({ url: sml.url, smpId: SMP_ID }))).migrated).toEqual([organization]);
    await delivered();
    expectStatus(
      await call(app, { url: `${PARTICIPANTS}/${participant.identifier}`, user: t.users.serviceProvider }),
      404,
    );
    const audit = expectStatus(
      await call(app, {
        url: `/rest/api/audit?identifier=${encodeURIComponent(organization)}&operation=migrate`,
        user: t.users.authority,
      }),
      200,
    );
    expect(audit.content).toEqual([expect.objectContaining({ operation: 'migrate', before: stillHere, after: null })]);
    expect(JSON.stringify(audit)).not.toContain(migrationKey);
    expect(directory.indexed.has(organization)).toBe(false);
    // The SML's registration is the other SMP's now: left alone.
    expect(sml.calls.delete - calls.delete).toBe(0);
    expect(sml.registrations.get(OTHER_SMP)?.has(organization)).toBe(true);
  });

  it('withdraws a key before it is used: the other SMP cannot migrate with it, and the organization stays registered', async () => {
    const participant = await registered();
    const first = (expectStatus(await migrationOut(participant), 201) as { migrationKey: string }).migrationKey;
    const second = (expectStatus(await migrationOut(participant), 201) as { migrationKey: string }).migrationKey;
    await expect(otherSmp().migrate(participant.qualifiedIdentifier, first)).rejects.toMatchObject({
      fault: 'NotFoundFault',
    });
    expect(await migrationOut(participant, 'DELETE')).toMatchObject({ statusCode: 204 });
    await expect(otherSmp().migrate(participant.qualifiedIdentifier, second)).rejects.toMatchObject({
      fault: 'NotFoundFault',
    });
    expect(held().has(participant.qualifiedIdentifier)).toBe(true);
    expect(await networkOf(participant)).toMatchObject({ sml: { state: 'registered' } });
    expectStatus(await migrationOut(participant, 'DELETE'), 409);
    expectStatus(
      await call(app, {
        method: 'POST',
        url: `${PARTICIPANTS}/${participant.identifier}/migration-out`,
        user: t.users.otherServiceProvider,
      }),
      404,
    );
  });

  it('calls the SML for one user one at a time: a second key asked for meanwhile is a 429, and the turn comes back', async () => {
    const participant = await registered();
    // The SML holds the first call until the client's timeout: the second is asked for meanwhile.
    sml.fail('timeout');
    try {
      const answers = await Promise.all([migrationOut(participant), migrationOut(participant)]);
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([429, 503]);
      const refused = answers.find((answer) => answer.statusCode === 429);
      expect(expectErrorBody(refused as (typeof answers)[number], 429).message).toMatch(/One SML call at a time/);
      expect(refused?.headers['retry-after']).toBe('1');
    } finally {
      sml.fail('none');
    }
    expectStatus(await migrationOut(participant), 201);
    expectStatus(await migrationOut(participant, 'DELETE'), 204);
  });
});

describe('delivery to the Peppol Directory', () => {
  it('pushes every change of an organization, and deletes it with its last participant, also after failures', async () => {
    directory.fail('fault');
    const participant = await addParticipant(app, t.users.serviceProvider);
    const url = `${PARTICIPANTS}/${participant.qualifiedIdentifier}`;
    expectStatus(
      await call(app, {
        method: 'PUT',
        url,
        user: t.users.serviceProvider,
        payload: { ...served, contact: { name: 'New Contact' } },
      }),
      200,
    );
    await vi.waitFor(async () => expect((await status('directory')).attempts).toBeGreaterThan(0), { timeout: 10_000 });
    expect(directory.indexed.has(participant.qualifiedIdentifier)).toBe(false);
    directory.fail('none');
    await delivered();
    expect(directory.indexed.get(participant.qualifiedIdentifier)).toBe(2);
    expectStatus(await call(app, { method: 'DELETE', url, user: t.users.serviceProvider }), 204);
    await delivered();
    expect(directory.indexed.has(participant.qualifiedIdentifier)).toBe(false);
  });
});

describe('order of the SML and the Directory', () => {
  it('pushes a participant to the Directory only once the SML holds it, since the Directory looks it up there', async () => {
    await delivered();
    sml.fail('fault');
    const participant = await addParticipant(app, t.users.serviceProvider);
    await vi.waitFor(async () => expect((await status()).attempts).toBeGreaterThan(2), { timeout: 10_000 });
    expect((await status('directory')).pending).toBeGreaterThan(0);
    expect(directory.indexed.has(participant.qualifiedIdentifier)).toBe(false);
    sml.fail('none');
    await delivered();
    expect(held().has(participant.qualifiedIdentifier)).toBe(true);
    expect(directory.indexed.get(participant.qualifiedIdentifier)).toBe(1);
  });
});

describe('sml-reconcile', () => {
  it('lists what the SML lacks and what it holds too many, and repairs both', async () => {
    const participant = await addParticipant(app, t.users.serviceProvider);
    await delivered();
    // Drift: the SML lost one registration and holds one the registry never had.
    held().delete(participant.qualifiedIdentifier);
    held().add('iso6523-actorid-upis::0192:400000018');
    const client = smlClient({ url: sml.url, smpId: SMP_ID });
    const listed = await reconcileSml(t.db, client, { dryRun: true });
    expect(listed).toMatchObject({
      missing: [{ participant: participant.qualifiedIdentifier }],
      extra: [{ participant: 'iso6523-actorid-upis::0192:400000018' }],
      repaired: false,
    });
    expect(held().has(participant.qualifiedIdentifier)).toBe(false);
    expect(await reconcileSml(t.db, client)).toMatchObject({
      missing: [{ participant: participant.qualifiedIdentifier, outcome: 'registered' }],
      extra: [{ participant: 'iso6523-actorid-upis::0192:400000018', outcome: 'deleted' }],
    });
    expect(held().has(participant.qualifiedIdentifier)).toBe(true);
    expect(held().has('iso6523-actorid-upis::0192:400000018')).toBe(false);
    expect(await reconcileSml(t.db, client, { dryRun: true })).toMatchObject({ missing: [], extra: [] });
  });
});

describe.runIf(testDatabaseKind === 'postgres')('two instances delivering from one PostgreSQL schema', () => {
  let otherDb: Database;
  let other: App;
  beforeAll(async () => {
    const [schema] = await t.db.query<{ name: string }>('SELECT current_schema() AS name');
    otherDb = openPostgres({
      connectionString: TEST_DATABASE_URL,
      schema: `${schema?.name},public`,
      maxConnections: 4,
    });
    other = await buildApp({ db: otherDb, ...deliveryOptions(sml, directory) });
    await other.ready();
  });
  afterAll(async () => {
    await other?.close();
    await otherDb?.close();
  });

  it('deliver each change once', async () => {
    await delivered();
    const calls = { ...sml.calls };
    const added = await Promise.all(
      Array.from({ length: 20 }, (_, index) => addParticipant(index % 2 === 0 ? app : other, t.users.serviceProvider)),
    );
    await delivered();
    expect(sml.calls.create - calls.create).toBe(20);
    for (const participant of added) expect(held().has(participant.qualifiedIdentifier)).toBe(true);
  });
});

describe.runIf(testDatabaseKind === 'postgres')('two instances and an SML slower than the lease', () => {
  // Renewed a third of the way: a process stalled longer than two thirds of it (the other test files running at once
  // can stall one for hundreds of milliseconds) would lose it for a reason this test is not about.
  const LEASE_MS = 1000;
  let slow: LocalSml;
  let own: TestApp;
  const instances: Array<{ app: App; db?: Database }> = [];
  beforeAll(async () => {
    slow = await startLocalSml();
    own = await startTestApp();
    const [schema] = await own.db.query<{ name: string }>('SELECT current_schema() AS name');
    const options = {
      sml: { url: slow.url, smpId: SMP_ID, timeoutMs: 10 * LEASE_MS },
      delivery: { intervalMs: 20, retryMs: { first: 50, max: 200 }, leaseMs: LEASE_MS },
    };
    const otherDb = openPostgres({
      connectionString: TEST_DATABASE_URL,
      schema: `${schema?.name},public`,
      maxConnections: 4,
    });
    instances.push(
      { app: await buildApp({ db: own.db, ...options }) },
      { app: await buildApp({ db: otherDb, ...options }), db: otherDb },
    );
    for (const instance of instances) await instance.app.ready();
  });
  afterAll(async () => {
    for (const instance of instances) {
      await instance.app.close();
      await instance.db?.close();
    }
    await own?.close();
    await slow?.close();
  });

  it('send each Create once: the lease outlives a delivery that takes longer than it', async () => {
    slow.delay(4 * LEASE_MS);
    const participant = await addAnyParticipant(instances[0]?.app as App, own.users.serviceProvider);
    await vi.waitFor(() => expect(slow.registrations.get(SMP_ID)?.has(participant.qualifiedIdentifier)).toBe(true), {
      timeout: 10_000,
      interval: 50,
    });
    // Long enough for the other instance to have sent it again had it taken the lease.
    await new Promise((resolve) => setTimeout(resolve, 8 * LEASE_MS));
    expect(slow.calls).toMatchObject({ create: 1, refused: 0 });
  });
});
