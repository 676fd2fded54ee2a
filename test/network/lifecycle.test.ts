import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import type { LocalSml } from '../../dev/local-sml.js';
import type { LocalDirectory } from '../../dev/local-directory.js';
import { smlClient, SmlError } from '../../src/network/sml-client.js';
import { directoryClient } from '../../src/network/directory-client.js';
import { reconcileSml } from '../../src/network/reconcile.js';
import { call } from '../helpers/requests.js';
import type { TestApp, TestUser } from '../helpers/app.js';
import { expectStatus } from '../helpers/administration.js';
import { expectErrorBody } from '../helpers/assertions.js';
import {
  addParticipant as addAnyParticipant,
  PARTICIPANTS,
  uniqueOrganization,
  type Participant,
} from '../helpers/participants.js';
import { addServed, deliveryOptions, SMP_ID, useDeliveryTestApp, type DeliveryTestApp } from '../helpers/delivery.js';

let t: TestApp;
let sml: LocalSml;
let directory: LocalDirectory;
let app: App;
let served: DeliveryTestApp['served'];
let servedToo: DeliveryTestApp['servedToo'];
useDeliveryTestApp((started) => ({ t, sml, directory, app, served, servedToo } = started));
afterEach(() => {
  sml.fail('none');
  directory.fail('none');
});

const OTHER_SMP = 'other-smp';
const KEY = 'aB3$cD4%eF5^gH6!';
const held = () => sml.registrations.get(SMP_ID) ?? new Set<string>();
const addParticipant = (user: TestUser, overrides: Record<string, unknown> = {}) =>
  addServed(app, user, served, overrides);
interface Status {
  target: string;
  pending: number;
  setAside: number;
  attempts: number;
  lastError: string | null;
}
const statuses = async (): Promise<Status[]> =>
  expectStatus(await call(app, { url: '/rest/api/deliveries', user: t.users.authority }), 200);
const status = async (target = 'sml') => (await statuses()).find((entry) => entry.target === target) as Status;
/** Nothing pending and nothing set aside (a call slowed by a loaded machine can set one aside for a moment). */
const delivered = () =>
  vi.waitFor(
    async () =>
      expect((await statuses()).map((entry) => [entry.pending, entry.setAside])).toEqual([
        [0, 0],
        [0, 0],
      ]),
    { timeout: 10_000, interval: 50 },
  );
interface Place {
  state: string | null;
  since: string | null;
  lastError: { fault: string | null; code: string | null; message: string } | null;
  nextAttemptAt: string | null;
}
const networkOf = async (
  participant: { identifier: string },
  user = t.users.serviceProvider,
): Promise<{ sml: Place; directory: Place }> =>
  expectStatus(await call(app, { url: `${PARTICIPANTS}/${participant.identifier}/network`, user }), 200);
const migrationOut = (participant: { identifier: string }, user: TestUser, method: 'POST' | 'DELETE' = 'POST') =>
  call(app, { method, url: `${PARTICIPANTS}/${participant.identifier}/migration-out`, user });
const giveKey = (participant: { identifier: string }, user: TestUser, migrationKey = KEY) =>
  call(app, {
    method: 'PUT',
    url: `${PARTICIPANTS}/${participant.identifier}/migration-key`,
    user,
    payload: { migrationKey },
  });
const stuck = async (): Promise<Array<{ participant: string; target: string; state: string }>> =>
  expectStatus(await call(app, { url: '/rest/api/deliveries/participants', user: t.users.authority }), 200);
const qualified = (organizationIdentifier: string) => `iso6523-actorid-upis::0192:${organizationIdentifier}`;

describe("who may move an organization's registration in the SML", () => {
  it('not a provider that added a participant without a process to an organization another serves (the attack of issue 29)', async () => {
    const rightful = await addParticipant(t.users.serviceProvider);
    await delivered();
    const intruder = await addAnyParticipant(app, t.users.otherServiceProvider, {
      organizationIdentifier: rightful.organizationIdentifier,
    });
    await delivered();
    // It learns nothing of the rightful provider's registration.
    expect(await networkOf(intruder, t.users.otherServiceProvider)).toMatchObject({
      sml: { state: 'no_process', lastError: null },
      directory: { state: 'no_process' },
    });
    for (const answer of [
      await migrationOut(intruder, t.users.otherServiceProvider),
      await migrationOut(intruder, t.users.otherServiceProvider, 'DELETE'),
      await giveKey(intruder, t.users.otherServiceProvider),
    ]) {
      expect(expectErrorBody(answer, 409).message).toMatch(/has no process: it has no say/);
    }
    expect(sml.migrations.has(rightful.qualifiedIdentifier)).toBe(false);
    expect(await networkOf(rightful)).toMatchObject({ sml: { state: 'registered' } });
    // The rightful provider's path still works: it is the only provider with a process.
    const { migrationKey } = expectStatus(await migrationOut(rightful, t.users.serviceProvider), 201) as {
      migrationKey: string;
    };
    expect(sml.migrations.get(rightful.qualifiedIdentifier)?.key).toBe(migrationKey);
    expect(await networkOf(intruder, t.users.otherServiceProvider)).toMatchObject({ sml: { state: 'no_process' } });
    expectStatus(await migrationOut(rightful, t.users.serviceProvider, 'DELETE'), 204);
    expect(await networkOf(rightful)).toMatchObject({ sml: { state: 'registered' } });
  });

  it('not one of several providers that serve it with processes; the authority may, and each provider sees the shared registration', async () => {
    const first = await addParticipant(t.users.serviceProvider);
    const second = await addServed(app, t.users.otherServiceProvider, servedToo, {
      organizationIdentifier: first.organizationIdentifier,
    });
    await delivered();
    expect(await networkOf(second, t.users.otherServiceProvider)).toMatchObject({ sml: { state: 'registered' } });
    for (const [participant, user] of [
      [first, t.users.serviceProvider],
      [second, t.users.otherServiceProvider],
    ] as const) {
      expect(expectErrorBody(await migrationOut(participant, user), 409).message).toMatch(
        /Other service providers serve .* only the registry authority/,
      );
    }
    const { migrationKey } = expectStatus(await migrationOut(first, t.users.authority), 201) as {
      migrationKey: string;
    };
    expect(sml.migrations.get(first.qualifiedIdentifier)?.key).toBe(migrationKey);
    for (const [participant, user] of [
      [first, t.users.serviceProvider],
      [second, t.users.otherServiceProvider],
    ] as const) {
      expect(await networkOf(participant, user)).toMatchObject({ sml: { state: 'migrating_out' } });
    }
    expectStatus(await migrationOut(first, t.users.admin, 'DELETE'), 204);
    expect(await networkOf(first)).toMatchObject({ sml: { state: 'registered' } });
  });

  it('a migration key in likewise: the sole provider with a process, or the authority', async () => {
    const taken = uniqueOrganization();
    sml.registrations.set(OTHER_SMP, new Set([...(sml.registrations.get(OTHER_SMP) ?? []), qualified(taken)]));
    await smlClient({ url: sml.url, smpId: OTHER_SMP }).prepareToMigrate(qualified(taken), KEY);
    const first = await addParticipant(t.users.serviceProvider, { organizationIdentifier: taken });
    const second = await addServed(app, t.users.otherServiceProvider, servedToo, { organizationIdentifier: taken });
    await delivered();
    expect(expectErrorBody(await giveKey(first, t.users.serviceProvider), 409).message).toMatch(
      /Other service providers serve/,
    );
    expect((await giveKey(second, t.users.authority)).statusCode).toBe(200);
    await delivered();
    expect(held().has(qualified(taken))).toBe(true);
    expect(await networkOf(second, t.users.otherServiceProvider)).toMatchObject({ sml: { state: 'registered' } });
  });
});

describe('an organization whose delivery keeps failing is set aside; the others are delivered', () => {
  for (const failure of ['fault', 'timeout', 'trickle', 'huge'] as const) {
    it(`failing for ever at the SML (${failure}), while the SML answers the others: set aside, retried, and delivered once it recovers`, async () => {
      await delivered();
      const bad = uniqueOrganization();
      sml.failFor(qualified(bad), failure);
      const failing = await addParticipant(t.users.serviceProvider, { organizationIdentifier: bad });
      const others: Participant[] = [];
      for (let index = 0; index < 4; index += 1) others.push(await addParticipant(t.users.serviceProvider));
      await vi.waitFor(() => expect(others.every((other) => held().has(other.qualifiedIdentifier))).toBe(true), {
        timeout: 10_000,
        interval: 50,
      });
      await vi.waitFor(
        async () =>
          expect(await networkOf(failing)).toMatchObject({
            sml: {
              state: 'set_aside',
              lastError: { message: expect.stringMatching(failure === 'fault' ? /InternalErrorFault/ : /SML/) },
            },
            directory: { state: 'waiting_for_sml' },
          }),
        { timeout: 10_000, interval: 50 },
      );
      const failingStatus = await status();
      expect(failingStatus.setAside).toBeGreaterThanOrEqual(1);
      expect(failingStatus.attempts).toBe(0);
      expect(await stuck()).toContainEqual(
        expect.objectContaining({ participant: qualified(bad), target: 'sml', state: 'set_aside' }),
      );
      // Its later changes wait with it, and are delivered as its state of the moment once the SML answers for it.
      expectStatus(
        await call(app, {
          method: 'PUT',
          url: `${PARTICIPANTS}/${failing.identifier}`,
          user: t.users.serviceProvider,
          payload: { ...served, contact: { name: 'Later' } },
        }),
        200,
      );
      sml.failFor(qualified(bad), 'none');
      await vi.waitFor(
        async () =>
          expect(await networkOf(failing)).toMatchObject({
            sml: { state: 'registered' },
            directory: { state: 'pushed' },
          }),
        { timeout: 10_000, interval: 50 },
      );
      expect(held().has(qualified(bad))).toBe(true);
      await delivered();
    });
  }

  /** An organization the peer refuses (as `refuse` makes it), added before another; both delivered. */
  const refusedBeforeAnother = async (refuse: (participant: string) => void) => {
    await delivered();
    const bad = uniqueOrganization();
    refuse(qualified(bad));
    const refused = await addParticipant(t.users.serviceProvider, { organizationIdentifier: bad });
    const other = await addParticipant(t.users.serviceProvider);
    await delivered();
    return { bad, refused, other };
  };

  it('refused for good by the SML with a soap:Client fault (a request it cannot read): recorded as refused, not retried, the others go on', async () => {
    const { refused, other } = await refusedBeforeAnother((participant) => sml.failFor(participant, 'clientFault'));
    expect(held().has(other.qualifiedIdentifier)).toBe(true);
    expect(await networkOf(refused)).toMatchObject({ sml: { state: 'refused', lastError: { fault: 'soap:Client' } } });
    expect(await status()).toMatchObject({ setAside: 0, attempts: 0 });
    const refusals = sml.calls.refused;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sml.calls.refused).toBe(refusals);
  });

  it('refused for good by the Directory (400): recorded as refused, the others pushed', async () => {
    const { bad, refused, other } = await refusedBeforeAnother((participant) =>
      directory.failFor(participant, 'badRequest'),
    );
    expect(directory.indexed.has(other.qualifiedIdentifier)).toBe(true);
    expect(await networkOf(refused)).toMatchObject({
      sml: { state: 'registered' },
      directory: { state: 'refused', lastError: { code: 'HTTP 400' } },
    });
    expect(await status('directory')).toMatchObject({ setAside: 0, attempts: 0 });
    expect(await stuck()).toContainEqual(
      expect.objectContaining({ participant: qualified(bad), target: 'directory', state: 'refused' }),
    );
    // Tried again on its next change.
    directory.failFor(qualified(bad), 'none');
    expectStatus(
      await call(app, {
        method: 'PUT',
        url: `${PARTICIPANTS}/${refused.identifier}`,
        user: t.users.serviceProvider,
        payload: { ...served, contact: { name: 'Again' } },
      }),
      200,
    );
    await delivered();
    expect(await networkOf(refused)).toMatchObject({ directory: { state: 'pushed', lastError: null } });
  });

  it('failing at the Directory (timeout) for one organization only: set aside there, the others pushed', async () => {
    await delivered();
    const bad = uniqueOrganization();
    directory.failFor(qualified(bad), 'timeout');
    const failing = await addParticipant(t.users.serviceProvider, { organizationIdentifier: bad });
    const other = await addParticipant(t.users.serviceProvider);
    await vi.waitFor(() => expect(directory.indexed.has(other.qualifiedIdentifier)).toBe(true), {
      timeout: 10_000,
      interval: 50,
    });
    await vi.waitFor(
      async () => expect(await networkOf(failing)).toMatchObject({ directory: { state: 'set_aside' } }),
      { timeout: 10_000, interval: 50 },
    );
    directory.failFor(qualified(bad), 'none');
    await vi.waitFor(async () => expect(await networkOf(failing)).toMatchObject({ directory: { state: 'pushed' } }), {
      timeout: 10_000,
      interval: 50,
    });
  });

  for (const failure of ['refuse', 'fault', 'timeout'] as const) {
    it(`the SML failing for everyone (${failure}) holds everything, sets nothing aside, and delivers everything once when it is back`, async () => {
      await delivered();
      const creates = sml.calls.create;
      sml.fail(failure);
      const added: Participant[] = [];
      for (let index = 0; index < 6; index += 1) added.push(await addParticipant(t.users.serviceProvider));
      await vi.waitFor(async () => expect((await status()).attempts).toBeGreaterThan(2), { timeout: 10_000 });
      expect(await status()).toMatchObject({ setAside: 0 });
      sml.fail('none');
      await delivered();
      for (const participant of added) expect(held().has(participant.qualifiedIdentifier)).toBe(true);
      expect(sml.calls.create - creates).toBe(added.length);
      expect(await status()).toMatchObject({ setAside: 0, attempts: 0 });
    });
  }
});

describe('a refused migration key (issue 29, item 3)', () => {
  it("given right after the add while the SML delivery is behind: reported as refused with the SML's fault, and no Create follows", async () => {
    await delivered();
    const taken = uniqueOrganization();
    sml.registrations.set(OTHER_SMP, new Set([...(sml.registrations.get(OTHER_SMP) ?? []), qualified(taken)]));
    await smlClient({ url: sml.url, smpId: OTHER_SMP }).prepareToMigrate(qualified(taken), KEY);
    sml.fail('refuse');
    const participant = await addParticipant(t.users.serviceProvider, { organizationIdentifier: taken });
    expect((await giveKey(participant, t.users.serviceProvider, 'zY9#xW8@vU7!')).statusCode).toBe(200);
    const calls = { ...sml.calls };
    sml.fail('none');
    await delivered();
    expect(await networkOf(participant)).toMatchObject({
      sml: { state: 'refused', lastError: { fault: 'NotFoundFault', code: 'ERR-100' } },
    });
    expect(sml.calls.create - calls.create).toBe(0);
    expect(sml.registrations.get(OTHER_SMP)?.has(qualified(taken))).toBe(true);
  });
});

describe('a migration out racing a delete (issue 29, item 5)', () => {
  it('a delete delivered while PrepareToMigrate is answered slowly: 409, nothing recorded, and a participant added again is registered', async () => {
    const participant = await addParticipant(t.users.serviceProvider);
    await delivered();
    // An instance that waits for the SML longer than the late answer takes.
    const patient = await buildApp({
      db: t.db,
      ...deliveryOptions(sml, directory),
      sml: { url: sml.url, smpId: SMP_ID, timeoutMs: 5000 },
    });
    await patient.ready();
    sml.answerLate('PrepareMigrationRecord', 1500);
    try {
      const asked = call(patient, {
        method: 'POST',
        url: `${PARTICIPANTS}/${participant.identifier}/migration-out`,
        user: t.users.serviceProvider,
      });
      await vi.waitFor(() => expect(sml.migrations.has(participant.qualifiedIdentifier)).toBe(true), {
        timeout: 5000,
        interval: 20,
      });
      expectStatus(
        await call(app, {
          method: 'DELETE',
          url: `${PARTICIPANTS}/${participant.identifier}`,
          user: t.users.serviceProvider,
        }),
        204,
      );
      await vi.waitFor(() => expect(held().has(participant.qualifiedIdentifier)).toBe(false), {
        timeout: 5000,
        interval: 20,
      });
      expect(expectErrorBody(await asked, 409).message).toMatch(/changed while the SML answered/);
    } finally {
      sml.answerLate('PrepareMigrationRecord', 0);
      await patient.close();
    }
    expect(
      await t.db.query('SELECT state FROM sml_participants WHERE participant = $1', [participant.qualifiedIdentifier]),
    ).toEqual([]);
    const again = await addParticipant(t.users.serviceProvider, {
      organizationIdentifier: participant.organizationIdentifier,
    });
    await delivered();
    expect(held().has(participant.qualifiedIdentifier)).toBe(true);
    expect(await networkOf(again)).toMatchObject({ sml: { state: 'registered' } });
    expect((await reconcileSml(t.db, smlClient({ url: sml.url, smpId: SMP_ID }), { dryRun: true })).migrated).toEqual(
      [],
    );
  });
});

describe('sml-reconcile tells what the SML answered, per organization (issue 29, item 4)', () => {
  it('held by another SMP, refused, registered', async () => {
    await delivered();
    const elsewhere = uniqueOrganization();
    const lost = await addParticipant(t.users.serviceProvider);
    const taken = await addParticipant(t.users.serviceProvider, { organizationIdentifier: elsewhere });
    await delivered();
    held().delete(lost.qualifiedIdentifier);
    held().delete(taken.qualifiedIdentifier);
    sml.registrations.set(OTHER_SMP, new Set([...(sml.registrations.get(OTHER_SMP) ?? []), qualified(elsewhere)]));
    const result = await reconcileSml(t.db, smlClient({ url: sml.url, smpId: SMP_ID }));
    expect(result.missing).toEqual(
      expect.arrayContaining([
        { participant: lost.qualifiedIdentifier, outcome: 'registered' },
        expect.objectContaining({
          participant: qualified(elsewhere),
          outcome: 'held_elsewhere',
          message: expect.stringMatching(/ERR-106.*already exist/),
        }),
      ]),
    );
    expect(held().has(lost.qualifiedIdentifier)).toBe(true);
  });
});

describe('peers bounded in bytes and time (issue 29, item 6)', () => {
  // The huge answer's client has time to spare, so that its byte bound, not its time bound, ends it on a loaded machine.
  const timeoutFor = (failure: 'huge' | 'trickle') => (failure === 'huge' ? 10_000 : 1000);

  it('an SML answer of more than 12 MB, or trickled a byte a second, ends the call within its bounds', async () => {
    for (const failure of ['huge', 'trickle'] as const) {
      const client = smlClient({ url: sml.url, smpId: SMP_ID, timeoutMs: timeoutFor(failure) });
      sml.fail(failure);
      const started = Date.now();
      const error = await client.list().then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(SmlError);
      expect((error as SmlError).message).toMatch(
        failure === 'huge' ? /more than 1048576 bytes/ : /did not answer whole within 1000 ms/,
      );
      expect((error as SmlError).final).toBe(false);
      expect(Date.now() - started).toBeLessThan(5000);
    }
  });

  it('a Directory answer likewise', async () => {
    for (const failure of ['huge', 'trickle'] as const) {
      const client = directoryClient({ url: directory.url, timeoutMs: timeoutFor(failure) });
      directory.fail(failure);
      await expect(client.put(qualified('bounded'))).rejects.toThrow(
        failure === 'huge' ? /more than 1048576 bytes/ : /within 1000 ms/,
      );
    }
  });

  it("a provider's migration key asked of an SML that trickles: 503 within the bound, and the turn comes back", async () => {
    const participant = await addParticipant(t.users.serviceProvider);
    await delivered();
    sml.fail('trickle');
    expect(expectErrorBody(await migrationOut(participant, t.users.serviceProvider), 503).message).toMatch(
      /did not answer whole/,
    );
    sml.fail('none');
    expectStatus(await migrationOut(participant, t.users.serviceProvider), 201);
  });

  it('an identifier with a character XML 1.0 cannot carry: a refusal no retry cures, never sent; the SML sent one anyway answers soap:Client', async () => {
    const calls = { ...sml.calls };
    const error = await smlClient({ url: sml.url, smpId: SMP_ID })
      .create(qualified('666\u0001'))
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );
    expect(error).toBeInstanceOf(SmlError);
    expect(error).toMatchObject({ final: true, message: expect.stringMatching(/not sent to the SML: .*U\+0001/) });
    expect(sml.calls).toEqual(calls);
    const sent = await fetch(`${sml.url}/manageparticipantidentifier`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body: '<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>666&#1;</S:Body></S:Envelope>',
    });
    expect(sent.status).toBe(500);
    expect(await sent.text()).toMatch(
      /<faultcode>S:Client<\/faultcode><faultstring>Error reading XMLStreamReader: Illegal character/,
    );
  });
});
