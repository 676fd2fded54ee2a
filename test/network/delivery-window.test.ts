import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { appendChange, numberChanges, SYSTEM_ACTOR } from '../../src/db/change-log.js';
import type { ChangeSignal } from '../../src/db/change-signal.js';
import { outboxDelivery, type Delivery, type Outcome } from '../../src/network/outbox.js';
import { importParticipants } from '../../src/participants/json-lines.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { addProcess } from '../helpers/catalogue.js';
import { participantForm, uniqueOrganization } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';
import { startLocalDirectory, type LocalDirectory } from '../../dev/local-directory.js';
import { startLocalSml, type LocalSml } from '../../dev/local-sml.js';
import { directoryClient } from '../../src/network/directory-client.js';
import { SmlError, smlClient } from '../../src/network/sml-client.js';

const organization = (n: number) => `iso6523-actorid-upis::0192:9${String(n).padStart(8, '0')}`;

describe('the stand-ins answer at a network peer’s pace', () => {
  let sml: LocalSml;
  let directory: LocalDirectory;
  beforeAll(async () => {
    sml = await startLocalSml(0, undefined, { latencyMs: 50, maxInFlight: 3 });
    directory = await startLocalDirectory(0, undefined, { latencyMs: 50, maxInFlight: 2 });
  });
  afterAll(async () => {
    await sml.close();
    await directory.close();
  });

  it('answers each call after its latency, takes at most its bound at once, and says the peak', async () => {
    const client = smlClient({ url: sml.url, smpId: 'pace-smp', timeoutMs: 5000 });
    const started = Date.now();
    await Promise.all(Array.from({ length: 9 }, (_, n) => client.create(organization(n))));
    // Nine calls, three at a time, 50 ms each: three rounds at least.
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(sml.peakInFlight()).toBe(3);
    expect(sml.inFlight()).toBe(0);
    expect(sml.registrations.get('pace-smp')?.size).toBe(9);

    const indexer = directoryClient({ url: directory.url, timeoutMs: 5000 });
    await Promise.all(Array.from({ length: 6 }, (_, n) => indexer.put(organization(n))));
    expect(directory.peakInFlight()).toBe(2);
    expect(directory.indexed.size).toBe(6);
  });

  it('keeps its failure modes under the bound: a call waiting its turn still fails as told', async () => {
    sml.resetPeak();
    sml.limit(1);
    sml.failFor(organization(100), 'fault');
    const client = smlClient({ url: sml.url, smpId: 'pace-smp', timeoutMs: 5000 });
    const answers = await Promise.allSettled([client.create(organization(100)), client.create(organization(101))]);
    expect(answers.map((answer) => answer.status)).toEqual(['rejected', 'fulfilled']);
    expect(sml.peakInFlight()).toBe(1);
    sml.failFor(organization(100), 'none');
    sml.limit(Infinity);
  });
});

describe('the local SML’s CreateList and DeleteList, all or nothing as BDMSL', () => {
  let sml: LocalSml;
  beforeAll(async () => {
    sml = await startLocalSml();
  });
  afterAll(() => sml.close());
  const client = () => smlClient({ url: sml.url, smpId: 'list-smp', timeoutMs: 5000 });
  const other = () => smlClient({ url: sml.url, smpId: 'other-smp', timeoutMs: 5000 });
  const held = () => [...(sml.registrations.get('list-smp') ?? [])].sort();
  const refusalOf = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error as SmlError,
    );

  it('creates and deletes every member of a list in one call', async () => {
    const members = [1, 2, 3].map(organization);
    await client().createList(members);
    expect(held()).toEqual(members);
    expect(sml.calls.createList).toBe(1);
    await client().deleteList(members.slice(0, 2));
    expect(held()).toEqual(members.slice(2));
    expect(sml.calls.deleteList).toBe(1);
    await client().delete(members[2] as string);
  });

  it('refuses a whole CreateList with the fault a single Create gets when one member is held already, and stores none of it', async () => {
    await other().create(organization(12));
    const single = await refusalOf(client().create(organization(12)));
    const list = await refusalOf(client().createList([organization(11), organization(12), organization(13)]));
    expect(list?.fault).toBe('BadRequestFault');
    expect([list?.fault, list?.code]).toEqual([single?.fault, single?.code]);
    expect(list?.message).toMatch(/already exist/);
    expect(held()).toEqual([]);
  });

  it('refuses a whole DeleteList with NotFoundFault when one member is not held, and deletes none of it', async () => {
    await client().createList([organization(21), organization(22)]);
    const list = await refusalOf(client().deleteList([organization(21), organization(23), organization(22)]));
    expect([list?.fault, list?.code]).toEqual(['NotFoundFault', 'ERR-100']);
    expect(held()).toEqual([organization(21), organization(22)]);
  });
});

/** A change signal that never rings: the tests kick the worker, or its interval does. */
const silent = { subscribe: () => () => undefined } as unknown as ChangeSignal;

describe('the outbox delivers a window of distinct organizations at once', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('never has two calls for one organization in flight, and delivers each one’s changes in the log’s order', async () => {
    // Ten organizations, each changed three times, interleaved: every window ends before an organization it holds.
    const organizations = Array.from({ length: 10 }, (_, n) => organization(500 + n));
    const operations = ['create', 'update', 'delete'] as const;
    await t.db.transaction((tx) =>
      appendChange(
        tx,
        SYSTEM_ACTOR,
        operations.flatMap((operation) =>
          organizations.map((identifier) => ({
            resource: 'participant' as const,
            identifier,
            operation,
            before: null,
            after: null,
          })),
        ),
      ),
    );
    await numberChanges(t.db);
    const seen = new Map<string, string[]>();
    const inFlight = new Set<string>();
    let overlapped = 0;
    let peak = 0;
    let running = 0;
    const target = {
      name: 'order-test',
      deliver: () => Promise.resolve(true),
      async deliverMany(_db: unknown, entries: readonly Delivery[]): Promise<Outcome[]> {
        return Promise.all(
          entries.map(async ({ participant, operation }) => {
            if (inFlight.has(participant)) overlapped += 1;
            inFlight.add(participant);
            running += 1;
            peak = Math.max(peak, running);
            await new Promise((resolve) => setTimeout(resolve, 5));
            seen.set(participant, [...(seen.get(participant) ?? []), operation ?? '']);
            inFlight.delete(participant);
            running -= 1;
            return { called: true };
          }),
        );
      },
    };
    const worker = outboxDelivery(t.db, silent, target, { intervalMs: 10_000, concurrency: 4 });
    await worker.start();
    await worker.kick();
    await worker.stop();
    expect(overlapped).toBe(0);
    // Ten at once: one window per round of changes.
    expect(peak).toBe(10);
    for (const identifier of organizations) expect(seen.get(identifier)).toEqual([...operations]);
  });
});

describe('deliveries at the network’s pace', () => {
  const SMP = 'window-smp';
  // Each peer its own number of calls at once (SML_CALLS_AT_ONCE, DIRECTORY_CALLS_AT_ONCE).
  const CALLS_AT_ONCE = 3;
  const DIRECTORY_CALLS_AT_ONCE = 7;
  let t: TestApp;
  let sml: LocalSml;
  let directory: LocalDirectory;
  let app: App;
  let processes: Array<{ identifier: string }>;
  beforeAll(async () => {
    // The stand-ins take more at once than the registry may send: the bound seen is the registry's own.
    sml = await startLocalSml(0, undefined, { latencyMs: 50, maxInFlight: 16 });
    directory = await startLocalDirectory(0, undefined, { latencyMs: 20, maxInFlight: 16 });
    t = await startTestApp();
    app = await buildApp({
      db: t.db,
      sml: { url: sml.url, smpId: SMP, timeoutMs: 10_000 },
      directory: { url: directory.url, timeoutMs: 10_000 },
      smlListSize: 50,
      callsAtOnce: { sml: CALLS_AT_ONCE, directory: DIRECTORY_CALLS_AT_ONCE },
      delivery: { intervalMs: 50, retryMs: { first: 50, max: 200 }, leaseMs: 5000 },
    });
    await app.ready();
    processes = [{ identifier: (await addProcess(t.app, t.users.admin)).identifier }];
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
    await sml?.close();
    await directory?.close();
  });

  const held = () => sml.registrations.get(SMP) ?? new Set<string>();
  const setAside = async (target: string) =>
    (
      await t.db.query<{ participant: string }>(
        'SELECT participant FROM delivery_set_aside WHERE target = $1 ORDER BY participant',
        [target],
      )
    ).map((row) => row.participant);
  const smlStates = async (participants: string[]) =>
    Object.fromEntries(
      (
        await t.db.query<{ participant: string; state: string }>(
          'SELECT participant, state FROM sml_participants WHERE participant = ANY($1::text[])',
          [participants],
        )
      ).map((row) => [row.participant, row.state]),
    );
  let file = 0;
  /** Imports participants of these organization numbers (with a process) in one transaction: one change of the log. */
  const importAtOnce = async (numbers: string[]) => {
    const path = join(tmpdir(), `delivery-window-${process.pid}-${(file += 1)}.jsonl`);
    await writeFile(
      path,
      numbers
        .map((organizationIdentifier) => JSON.stringify(participantForm({ organizationIdentifier, processes })))
        .join('\n'),
    );
    await importParticipants(t.db, path, { serviceProviderId: t.fixture.serviceProviderId });
  };
  const norwegian = (_base: number, count: number) => Array.from({ length: count }, () => uniqueOrganization());
  const qualified = (number: string) => `iso6523-actorid-upis::0192:${number}`;

  it('brings 500 new organizations to the SML in lists and to the Directory, never more calls at once than each peer’s setting', async () => {
    const numbers = norwegian(31_000_000, 500);
    sml.resetPeak();
    directory.resetPeak();
    const requestsBefore = sml.clientCertificates.length;
    const listsBefore = sml.calls.createList;
    await importAtOnce(numbers);
    await vi.waitFor(
      () => {
        expect(held().size).toBe(numbers.length);
        expect(directory.indexed.size).toBe(numbers.length);
      },
      { timeout: 100_000, interval: 100 },
    );
    // Lists of 50: ten of them, where one at a time would have been 500 calls of 50 ms each.
    expect(sml.calls.createList - listsBefore).toBeGreaterThanOrEqual(10);
    expect(sml.clientCertificates.length - requestsBefore).toBeLessThan(60);
    expect(sml.peakInFlight()).toBeLessThanOrEqual(CALLS_AT_ONCE);
    expect(sml.peakInFlight()).toBeGreaterThan(1);
    // The Directory one organization a call, as many at once as its own setting allows and no more.
    expect(directory.peakInFlight()).toBe(DIRECTORY_CALLS_AT_ONCE);
    expect(await setAside('sml')).toEqual([]);
  }, 120_000);

  it('sends a list refused for one organization held elsewhere again member by member: only that one is refused', async () => {
    const numbers = norwegian(41_000_000, 40);
    const elsewhere = qualified(numbers[17] as string);
    await smlClient({ url: sml.url, smpId: 'another-smp', timeoutMs: 3000 }).create(elsewhere);
    const refusedBefore = sml.calls.refused;
    await importAtOnce(numbers);
    const others = numbers.map(qualified).filter((participant) => participant !== elsewhere);
    await vi.waitFor(() => expect(others.filter((participant) => !held().has(participant))).toEqual([]), {
      timeout: 30_000,
      interval: 100,
    });
    await vi.waitFor(async () => expect((await smlStates([elsewhere]))[elsewhere]).toBe('held_elsewhere'));
    const states = await smlStates(others);
    expect(new Set(Object.values(states))).toEqual(new Set(['registered']));
    // The list's refusal, and its member's own (a Create, as single); the others were created.
    expect(sml.calls.refused - refusedBefore).toBe(2);
    expect(await setAside('sml')).toEqual([]);
  });

  it('sets aside only the organization whose calls fail, and registers the rest of its list', async () => {
    const numbers = norwegian(51_000_000, 40);
    const failing = qualified(numbers[5] as string);
    sml.failFor(failing, 'fault');
    try {
      await importAtOnce(numbers);
      const others = numbers.map(qualified).filter((participant) => participant !== failing);
      await vi.waitFor(() => expect(others.filter((participant) => !held().has(participant))).toEqual([]), {
        timeout: 30_000,
        interval: 100,
      });
      await vi.waitFor(async () => expect(await setAside('sml')).toEqual([failing]));
      expect(held().has(failing)).toBe(false);
    } finally {
      sml.failFor(failing, 'none');
    }
    await vi.waitFor(() => expect(held().has(failing)).toBe(true), { timeout: 10_000 });
    await vi.waitFor(async () => expect(await setAside('sml')).toEqual([]));
  });

  it('tells a list whose answer was lost from organizations held elsewhere with one List', async () => {
    // An instance whose calls end sooner than the SML's answer to a CreateList comes (the SML has done it by then).
    await app.close();
    app = await buildApp({
      db: t.db,
      sml: { url: sml.url, smpId: SMP, timeoutMs: 600 },
      delivery: { intervalMs: 50, retryMs: { first: 50, max: 200 }, leaseMs: 5000, concurrency: CALLS_AT_ONCE },
      smlListSize: 50,
    });
    await app.ready();
    sml.answerLate('CreateList', 1000);
    try {
      const numbers = norwegian(71_000_000, 20);
      await importAtOnce(numbers);
      const participants = numbers.map(qualified);
      // Each registered, none taken for one another SMP holds.
      await vi.waitFor(
        async () =>
          expect(await smlStates(participants)).toEqual(
            Object.fromEntries(participants.map((participant) => [participant, 'registered'])),
          ),
        { timeout: 30_000, interval: 100 },
      );
      expect(await setAside('sml')).toEqual([]);
    } finally {
      sml.answerLate('CreateList', 0);
    }
  });

  it('deletes in lists too', async () => {
    const numbers = norwegian(61_000_000, 30);
    await importAtOnce(numbers);
    await vi.waitFor(() => expect(numbers.map(qualified).every((participant) => held().has(participant))).toBe(true), {
      timeout: 30_000,
    });
    const deleteListsBefore = sml.calls.deleteList;
    // The SML takes nothing for a moment: the deletes, each its own change, gather behind the call waiting its turn.
    sml.limit(0);
    for (const number of numbers) {
      const response = await call(t.app, {
        method: 'DELETE',
        url: `/rest/api/participants/${encodeURIComponent(qualified(number))}`,
        user: t.users.serviceProvider,
      });
      expect(response.statusCode, response.body).toBe(204);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    sml.limit(16);
    await vi.waitFor(() => expect(numbers.map(qualified).some((participant) => held().has(participant))).toBe(false), {
      timeout: 30_000,
    });
    expect(sml.calls.deleteList - deleteListsBefore).toBeGreaterThanOrEqual(1);
  });
});
