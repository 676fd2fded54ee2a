import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, unique } from '../helpers/requests.js';
import { buildApp } from '../../src/app.js';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { asAdmin, expectStatus, vendor } from '../helpers/administration.js';
import { addParticipant, dayFromToday, PARTICIPANTS } from '../helpers/participants.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { feedEnd, positionOf } from '../helpers/feed.js';
import { sweepExpiredParticipants } from '../../src/participants/expiry.js';

let t: TestApp;
let api: ReturnType<typeof asAdmin>;
let start: Awaited<ReturnType<typeof feedEnd>>;
beforeAll(async () => {
  t = await startTestApp();
  api = asAdmin(t);
  start = await feedEnd(t.db);
});
afterAll(() => t?.close());

interface Entry {
  seq?: number;
  resource: string;
  identifier: string;
  operation: string;
  user: { username: string } | null;
  before: unknown;
  after: unknown;
}

describe('the audit trail', () => {
  it('pages every change newest first, filtered by resource, identifier, operation, user, provider and time', async () => {
    const first = await addParticipant(t.app, t.users.serviceProvider);
    const capability = expectStatus(
      await api.send('POST', '/rest/api/capabilities', { title: unique('audited') }),
      201,
    );
    const response = await api.get('/rest/api/audit?size=2', t.users.authority);
    expect(response.headers['content-type']).toContain(vendor('audit.find'));
    const page = expectStatus(response, 200);
    expect(page.content.map((entry: Entry) => entry.identifier)).toEqual([
      capability.identifier,
      first.qualifiedIdentifier,
    ]);
    expect(page.totalElements).toBeGreaterThanOrEqual(2);
    expect(page.content[0]).toMatchObject({
      resource: 'capability',
      operation: 'create',
      origin: 'api',
      user: { username: 'admin', role: 'ADMIN' },
    });

    const byIdentifier = expectStatus(
      await api.get(`/rest/api/audit?identifier=${encodeURIComponent(first.qualifiedIdentifier.toUpperCase())}`),
      200,
    );
    expect(byIdentifier.content.map((entry: Entry) => entry.operation)).toEqual(['create']);
    const byUser = expectStatus(
      await api.get('/rest/api/audit?user=PROVIDER-ONE&resource=participant&operation=create'),
      200,
    );
    expect(byUser.content.map((entry: Entry) => entry.identifier)).toContain(first.qualifiedIdentifier);
    expect(byUser.content.every((entry: Entry) => entry.user?.username === 'provider-one')).toBe(true);
    const byProvider = expectStatus(await api.get(`/rest/api/audit?provider=${t.fixture.serviceProviderId}`), 200);
    expect(byProvider.content.every((entry: Entry) => entry.resource === 'participant')).toBe(true);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(expectStatus(await api.get(`/rest/api/audit?from=${future}`), 200).totalElements).toBe(0);
    const past = new Date(Date.now() - 3_600_000).toISOString();
    expect(expectStatus(await api.get(`/rest/api/audit?to=${past}`), 200).totalElements).toBe(0);
  });

  it('shows a service provider the history of its own participants only', async () => {
    const own = await addParticipant(t.app, t.users.serviceProvider);
    const other = await addParticipant(t.app, t.users.otherServiceProvider);
    const page = expectStatus(await api.get('/rest/api/audit?size=2000', t.users.serviceProvider), 200);
    const identifiers = page.content.map((entry: Entry) => entry.identifier);
    expect(identifiers).toContain(own.qualifiedIdentifier);
    expect(identifiers).not.toContain(other.qualifiedIdentifier);
    expect(page.content.every((entry: Entry) => entry.resource === 'participant')).toBe(true);
    // Transferred to the other provider: the transfer is in both histories, what follows only in the new one's.
    const url = `${PARTICIPANTS}/${own.qualifiedIdentifier}`;
    expect(
      (
        await call(t.app, {
          method: 'PUT',
          url: `${url}/transfer/${t.fixture.otherServiceProviderId}`,
          user: t.users.serviceProvider,
        })
      ).statusCode,
    ).toBe(200);
    expectStatus(await call(t.app, { method: 'DELETE', url, user: t.users.otherServiceProvider }), 204);
    const query = `/rest/api/audit?identifier=${encodeURIComponent(own.qualifiedIdentifier)}`;
    const mine = expectStatus(await api.get(query, t.users.serviceProvider), 200);
    expect(mine.content.map((entry: Entry) => entry.operation)).toEqual(['transfer', 'create']);
    const theirs = expectStatus(await api.get(query, t.users.otherServiceProvider), 200);
    expect(theirs.content.map((entry: Entry) => entry.operation)).toEqual(['delete', 'transfer']);
  });

  it('is refused to access point providers and anonymous callers, and checks its filters', async () => {
    expectStatus(await api.get('/rest/api/audit', t.users.accessPointProvider), 403);
    expectStatus(await api.get('/rest/api/audit', null), 401);
    expectStatus(await api.get('/rest/api/changes', t.users.accessPointProvider), 403);
    expectStatus(await api.get('/rest/api/audit?operation=rename'), 400);
    expectStatus(await api.get('/rest/api/audit?from=yesterday'), 400);
    expectStatus(await api.get('/rest/api/changes?after='), 400);
  });
});

describe('the change feed', () => {
  it('answers the entries after a cursor in log order and the cursor to go on from', async () => {
    const all: Entry[] = [];
    let cursor = start.cursor;
    for (;;) {
      const page = expectStatus(await api.get(`/rest/api/changes?after=${cursor}&limit=3`, t.users.authority), 200);
      all.push(...page.entries);
      cursor = page.next;
      if (page.entries.length === 0) break;
    }
    const seqs = all.map((entry) => entry.seq ?? 0);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs[0]).toBe(start.seq + 1);
    expect(await positionOf(t.db, cursor)).toBe((await feedEnd(t.db)).seq);
  });

  it('scopes a service provider to its participants and moves its cursor past what it does not see', async () => {
    const after = await feedEnd(t.db);
    await addParticipant(t.app, t.users.otherServiceProvider);
    const own = await addParticipant(t.app, t.users.serviceProvider);
    await addParticipant(t.app, t.users.otherServiceProvider);
    const page = expectStatus(await api.get(`/rest/api/changes?after=${after.cursor}`, t.users.serviceProvider), 200);
    expect(page.entries.map((entry: Entry) => entry.identifier)).toEqual([own.qualifiedIdentifier]);
    expect(await positionOf(t.db, page.next)).toBe(after.seq + 3);
  });

  it('holds a long poll until a change comes, and answers it at once', async () => {
    const waiting = api.get(`/rest/api/changes?after=${(await feedEnd(t.db)).cursor}&wait=20`, t.users.authority);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const capability = expectStatus(
      await api.send('POST', '/rest/api/capabilities', { title: unique('awaited') }),
      201,
    );
    const page = expectStatus(await waiting, 200);
    expect(page.entries.map((entry: Entry) => entry.identifier)).toEqual([capability.identifier]);
  });

  it('answers an empty long poll with a cursor at the same place when its time is up', async () => {
    const end = await feedEnd(t.db);
    const page = expectStatus(await api.get(`/rest/api/changes?after=${end.cursor}&wait=1`, t.users.authority), 200);
    expect(page.entries).toEqual([]);
    expect(await positionOf(t.db, page.next)).toBe(end.seq);
  });
});

describe("the change feed's cursor", () => {
  const feed = async (user: TestUser, after?: string) =>
    expectStatus(
      await api.get(`/rest/api/changes${after === undefined ? '' : `?after=${encodeURIComponent(after)}`}`, user),
      200,
    ) as { entries: Entry[]; next: string };
  /** The cursor at the end of what `user` sees, following the feed from its start. */
  const followedToEnd = async (user: TestUser) => {
    let page = await feed(user);
    while (page.entries.length > 0) page = await feed(user, page.next);
    return page.next;
  };

  it('tells a provider nothing of the changes of others: no position in its entries, cursors alike however many others made', async () => {
    const other = t.users.otherServiceProvider;
    const cursorsAfter = async (changesOfOthers: number) => {
      const cursor = await followedToEnd(other);
      for (let change = 0; change < changesOfOthers; change += 1) await addParticipant(t.app, t.users.serviceProvider);
      const [first, again] = [await feed(other, cursor), await feed(other, cursor)];
      expect([first.entries, again.entries]).toEqual([[], []]);
      return [first.next, again.next];
    };
    const afterOne = await cursorsAfter(1);
    const afterTwenty = await cursorsAfter(20);
    for (const cursor of [...afterOne, ...afterTwenty]) expect(cursor).toMatch(/^[A-Za-z0-9_-]{48}$/);
    // Read twice at the same place, the cursor differs: neither its bytes nor whether it moved tell anything.
    expect(new Set([...afterOne, ...afterTwenty]).size).toBe(4);

    const own = await addParticipant(t.app, other);
    const page = await feed(other, afterTwenty[1]);
    expect(page.entries.map((entry) => entry.identifier)).toEqual([own.qualifiedIdentifier]);
    expect(page.entries[0]).not.toHaveProperty('seq');
    const audited = expectStatus(
      await api.get(`/rest/api/audit?identifier=${encodeURIComponent(own.qualifiedIdentifier)}`, other),
      200,
    );
    expect(audited.content[0]).not.toHaveProperty('seq');
    // The authority sees the whole log, with its positions.
    expect(
      expectStatus(
        await api.get(`/rest/api/audit?identifier=${encodeURIComponent(own.qualifiedIdentifier)}`, t.users.authority),
        200,
      ).content[0].seq,
    ).toBeGreaterThan(0);
  });

  it('goes on from a cursor at another instance of the service, as after a restart', async () => {
    const cursor = await followedToEnd(t.users.serviceProvider);
    const own = await addParticipant(t.app, t.users.serviceProvider);
    const restarted = await buildApp({ db: t.db });
    try {
      await restarted.ready();
      const answer = await call(restarted, {
        url: `/rest/api/changes?after=${encodeURIComponent(cursor)}`,
        user: t.users.serviceProvider,
      });
      expect(expectStatus(answer, 200).entries.map((entry: Entry) => entry.identifier)).toEqual([
        own.qualifiedIdentifier,
      ]);
    } finally {
      await restarted.close();
    }
  });

  it('refuses a cursor it did not give, changed or made up, with a 400 that says what to send', async () => {
    const cursor = await followedToEnd(t.users.serviceProvider);
    const changed = `${cursor.slice(0, 10)}${cursor[10] === 'A' ? 'B' : 'A'}${cursor.slice(11)}`;
    for (const after of [changed, '42', cursor.slice(0, 40), 'not a cursor']) {
      const body = expectErrorBody(
        await api.get(`/rest/api/changes?after=${encodeURIComponent(after)}`, t.users.serviceProvider),
        400,
      );
      expect(body.errors).toEqual([
        expect.objectContaining({
          field: 'after',
          code: 'Cursor',
          defaultMessage:
            "is not a cursor of this registry's change feed: send the `next` of a page, or no `after` to read from the start",
        }),
      ]);
    }
  });
});

describe('a mirror following the feed from the start', () => {
  it('ends with the same participants as a full export while writes run concurrently', async () => {
    const mirror = new Map<string, unknown>();
    let cursor: string | undefined;
    let writing = true;
    const follow = async () => {
      for (;;) {
        const after = cursor === undefined ? '' : `after=${cursor}&`;
        // Only a read asked once the writes were done can say the mirror has caught up.
        const last = !writing;
        const page = expectStatus(
          await api.get(
            `/rest/api/changes?${after}limit=7&resource=participant&wait=${last ? 0 : 1}`,
            t.users.authority,
          ),
          200,
        );
        for (const entry of page.entries as Entry[]) {
          if (entry.after === null) mirror.delete((entry.before as { identifier: string }).identifier);
          else mirror.set((entry.after as { identifier: string }).identifier, entry.after);
        }
        const done = last && page.entries.length === 0;
        cursor = page.next;
        if (done) return;
      }
    };
    const write = async (user: typeof t.users.serviceProvider, other: string) => {
      for (let round = 0; round < 8; round += 1) {
        const participant = await addParticipant(t.app, user);
        const url = `${PARTICIPANTS}/${participant.qualifiedIdentifier}`;
        if (round % 4 === 0) expectStatus(await call(t.app, { method: 'DELETE', url, user }), 204);
        if (round % 4 === 1) {
          expectStatus(
            await call(t.app, {
              method: 'PUT',
              url,
              user,
              payload: { processes: [], contact: { name: unique('contact') } },
            }),
            200,
          );
        }
        if (round % 4 === 2)
          expect((await call(t.app, { method: 'PUT', url: `${url}/transfer/${other}`, user })).statusCode).toBe(200);
        if (round % 4 === 3) {
          // Its delete date comes (set behind the API's back, as the calendar would): the sweep logs its expiry.
          await t.db.query('UPDATE participants SET delete_date = $2::date WHERE id = $1', [
            participant.identifier,
            dayFromToday(-1),
          ]);
          await sweepExpiredParticipants(t.app.db);
        }
      }
    };
    const following = follow();
    await Promise.all([
      write(t.users.serviceProvider, t.fixture.otherServiceProviderId),
      write(t.users.otherServiceProvider, t.fixture.serviceProviderId),
    ]);
    writing = false;
    await following;
    const exported = await t.app.inject({
      method: 'GET',
      url: `${PARTICIPANTS}?processes=true`,
      headers: { authorization: t.users.authority.authorization, accept: vendor('participants.stream') },
    });
    const participants = expectStatus(exported, 200) as Array<{ identifier: string }>;
    expect(participants.length).toBeGreaterThan(0);
    const byId = (list: Array<{ identifier: string }>) =>
      [...list].sort((a, b) => a.identifier.localeCompare(b.identifier));
    expect(byId([...mirror.values()] as Array<{ identifier: string }>)).toEqual(byId(participants));
  });
});

describe('migration keys without an SML', () => {
  it('are a 409 in the common error body, not a 503 that invites a retry: this registry registers nothing in the SML', async () => {
    const participant = await addParticipant(t.app, t.users.serviceProvider);
    for (const method of ['POST', 'DELETE'] as const) {
      const answer = await call(t.app, {
        method,
        url: `${PARTICIPANTS}/${participant.identifier}/migration-out`,
        user: t.users.serviceProvider,
      });
      expectErrorBody(answer, 409, /No SML is configured/);
    }
  });
});
