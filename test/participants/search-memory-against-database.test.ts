import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NOT_HELD } from '../../src/core/held.js';
import type { ChangeNotice } from '../../src/db/change-log.js';
import { batchedReads } from '../../src/db/batched-reads.js';
import type { Database, Queryable } from '../../src/db/database.js';
import { HeldParticipants } from '../../src/participants/held-participants.js';
import { pageRequest } from '../../src/core/paging.js';
import { checkedKey, SmpKeys } from '../../src/smp/keys.js';
import type { ParticipantFilter } from '../../src/participants/schemas.js';
import { findParticipants, PARTICIPANT_SORTABLE, PARTICIPANT_TIE_BREAKER } from '../../src/participants/repository.js';
import { participantsHeld, startOtherInstance, startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { testCertificate } from '../helpers/certificates.js';
import { openTestDatabase, testDatabaseKind } from '../helpers/database.js';
import {
  addParticipant,
  byQualified,
  PARTICIPANTS,
  uniqueOrganization,
  type Participant,
} from '../helpers/participants.js';
import { withLuhnDigit } from '../helpers/organization-numbers.js';
import { call, unique } from '../helpers/requests.js';

let t: TestApp;
let admin: TestUser;
let one: TestUser;
let two: TestUser;

const WORDS = ['Bygg', 'Fjord', 'Fisk', 'Rør', 'Byggeservice', 'Sør', 'Nord', 'Ås'];
const QUERIES = ['bygg', 'ygg', 'yggs', 'fjord', 'rør', 'sør n', 'ås', 'org', 'zzz', 'bygg fj'];

beforeAll(async () => {
  t = await startTestApp();
  ({ admin, serviceProvider: one, otherServiceProvider: two } = t.users);
  for (let n = 0; n < 40; n += 1) {
    const name = `${WORDS[n % WORDS.length]} ${WORDS[(n * 3 + 1) % WORDS.length]}${n % 5 === 0 ? ' AS' : ''}`;
    const created = await addParticipant(
      t.app,
      n % 3 === 0 ? two : one,
      n % 2 === 0 ? { name } : { name, icd: '0007', organizationIdentifier: withLuhnDigit(uniqueOrganization()) },
    );
    // Some organizations are served by both providers: each has its own participant.
    if (n % 7 === 0)
      await addParticipant(t.app, n % 3 === 0 ? one : two, {
        name: `${name} Vest`,
        icd: created.icd,
        organizationIdentifier: created.organizationIdentifier,
      });
  }
  // One whose removal is due: found until its day comes, so it is counted apart from those without a delete date.
  await addParticipant(t.app, one, { name: 'Fjord Avvikling AS', deleteDate: dayOf(30) });
  await participantsHeld(t.app);
});
afterAll(() => t.close());

/** The date `days` from today (UTC), as the API writes dates. */
const dayOf = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

async function search(query: string, user: TestUser, app = t.app) {
  const response = await call(app, { url: `${PARTICIPANTS}?${query}`, user });
  expect(response.statusCode, response.body).toBe(200);
  const page = response.json();
  return {
    total: page.totalElements as number,
    ids: (page.content as Participant[]).map((participant) => participant.identifier),
  };
}

describe('participant search answered from memory', () => {
  it('answers every search as the database alone does: the same page and the same exact total', async () => {
    type Case = { parameters: Record<string, string>; user: TestUser; scope: string | null };
    const byText = QUERIES.flatMap((query): Case[] => [
      { parameters: { query }, user: admin, scope: null },
      { parameters: { query, icd: '0192' }, user: admin, scope: null },
      { parameters: { query, size: '2', page: '1' }, user: one, scope: t.fixture.serviceProviderId },
      { parameters: { search: query }, user: two, scope: t.fixture.otherServiceProviderId },
    ]);
    // Without text the total is counted in memory and the database finds the page, in any order.
    const withoutText: Case[] = [
      { parameters: {}, user: admin, scope: null },
      { parameters: { icd: '0007', sort: 'name' }, user: admin, scope: null },
      { parameters: { icd: '0088' }, user: admin, scope: null },
      {
        parameters: { lastModificationDateFrom: dayOf(0), sort: 'name,DESC', size: '5', page: '2' },
        user: admin,
        scope: null,
      },
      { parameters: { lastModificationDateTo: dayOf(-1) }, user: admin, scope: null },
      { parameters: { lastModificationDate: dayOf(0), icd: '0192' }, user: one, scope: t.fixture.serviceProviderId },
      { parameters: { query: '' }, user: two, scope: t.fixture.otherServiceProviderId },
    ];
    const cases = [...byText, ...withoutText];
    for (const { parameters, user, scope } of cases) {
      const answered = await search(new URLSearchParams(parameters).toString(), user);
      const filter = { processes: false, ...parameters } as ParticipantFilter;
      const page = pageRequest(
        {
          page: Number(parameters.page ?? 0),
          size: Number(parameters.size ?? 30),
          sort: parameters.sort === undefined ? undefined : [parameters.sort],
        },
        PARTICIPANT_SORTABLE,
        PARTICIPANT_TIE_BREAKER,
      );
      const database = await findParticipants(t.db, filter, scope, page);
      expect(answered, JSON.stringify(parameters)).toEqual({
        total: database.total,
        ids: database.rows.map((row) => row.identifier),
      });
    }
    expect((await search('query=bygg', admin)).total).toBeGreaterThan(5);
    expect((await search('icd=0007', admin)).total).toBeGreaterThan(5);
  });

  it('finds a participant at once after it is added, transferred, deleted and registered again', async () => {
    const word = unique('zebra').toLowerCase();
    const added = await addParticipant(t.app, one, { name: `Zebra ${word} AS` });
    expect(await search(`query=${word}`, one)).toEqual({ total: 1, ids: [added.identifier] });
    expect(await search(`query=${word}`, two)).toEqual({ total: 0, ids: [] });

    const transferred = await call(t.app, {
      method: 'PUT',
      url: `${byQualified(added.qualifiedIdentifier)}/transfer/${t.fixture.otherServiceProviderId}`,
      user: one,
    });
    expect(transferred.statusCode, transferred.body).toBe(200);
    expect(await search(`query=${word}`, one)).toEqual({ total: 0, ids: [] });
    expect(await search(`query=${word}`, two)).toEqual({ total: 1, ids: [added.identifier] });

    const deleted = await call(t.app, { method: 'DELETE', url: byQualified(added.qualifiedIdentifier), user: two });
    expect(deleted.statusCode, deleted.body).toBeLessThan(300);
    expect(await search(`query=${word}`, admin)).toEqual({ total: 0, ids: [] });

    const again = await addParticipant(t.app, one, {
      name: `Giraffe ${word}`,
      organizationIdentifier: added.organizationIdentifier,
    });
    expect(await search(`query=giraffe%20${word}`, admin)).toEqual({ total: 1, ids: [again.identifier] });
    expect(await search(`query=zebra%20${word}`, admin)).toEqual({ total: 0, ids: [] });
  });

  it('counts a search without text at once after an add, a change of its day and a delete', async () => {
    const count = async (query: string) => (await search(query, one)).total;
    const [all, today] = [await count(''), await count(`lastModificationDate=${dayOf(0)}`)];
    const added = await addParticipant(t.app, one, { name: 'Telling AS' });
    expect([await count(''), await count(`lastModificationDate=${dayOf(0)}`)]).toEqual([all + 1, today + 1]);
    await t.db.query('UPDATE participants SET last_modification_date = last_modification_date - 3 WHERE id = $1', [
      added.identifier,
    ]);
    await t.app.heldParticipants.load();
    expect([
      await count(''),
      await count(`lastModificationDate=${dayOf(0)}`),
      await count(`lastModificationDate=${dayOf(-3)}`),
    ]).toEqual([all + 1, today, 1]);
    await call(t.app, { method: 'DELETE', url: byQualified(added.qualifiedIdentifier), user: one });
    expect([await count(''), await count(`lastModificationDate=${dayOf(-3)}`)]).toEqual([all, 0]);
  });

  it('counts again after each change of a participant the search finds, by its name or by its identifier', async () => {
    const word = unique('kiwi').toLowerCase();
    const count = async () => (await search(`query=${word}`, admin)).total;
    expect(await count()).toBe(0);
    const byName = await addParticipant(t.app, one, { name: `Kiwi ${word}` });
    expect(await count()).toBe(1);
    // 9922 (AD:VAT) has no value rule: its identifier may start with the word.
    await addParticipant(t.app, two, { name: 'Unrelated AS', icd: '9922', organizationIdentifier: `${word}x1` });
    expect(await count()).toBe(2);
    expect(await count()).toBe(2);
    await call(t.app, { method: 'DELETE', url: byQualified(byName.qualifiedIdentifier), user: one });
    expect(await count()).toBe(1);
  });

  it.skipIf(testDatabaseKind !== 'postgres')(
    'finds on another instance what was written on this one once that instance has heard the change',
    async () => {
      const other = await startOtherInstance(t);
      try {
        await participantsHeld(other.app);
        const word = unique('okapi').toLowerCase();
        const added = await addParticipant(t.app, one, { name: `Okapi ${word}` });
        await expect
          .poll(() => search(`query=${word}`, admin, other.app), { timeout: 8000 })
          .toEqual({ total: 1, ids: [added.identifier] });
      } finally {
        await other.close();
      }
    },
  );

  it('leaves searches to the database when switched off', async () => {
    const off = await startTestApp({ participantSearchInMemory: false });
    try {
      expect(off.app.heldParticipants.state).toBe('off');
      await addParticipant(off.app, off.users.serviceProvider, { name: 'Fjordbygg AS' });
      expect((await search('query=fjordbygg', off.users.admin, off.app)).total).toBe(1);
    } finally {
      await off.close();
    }
  });
});

describe('the participants not held in memory (PARTICIPANT_SEARCH_IN_MEMORY=false)', () => {
  /** `db` with the text of every statement sent outside a transaction, per-row reads included, pushed to `sent`. */
  function recordingStatements(db: Database, sent: string[]): Database {
    const query: Queryable['query'] = (sql, params) => {
      sent.push(sql);
      return db.query(sql, params);
    };
    return { ...db, query, readOne: batchedReads(query) };
  }

  it('reads each cold SMP lookup in a statement of its own and holds no participant, also after the change log is replaced (a failover)', async () => {
    const sent: string[] = [];
    const pems = await testCertificate('search-off.example');
    const off = await startTestApp(
      { participantSearchInMemory: false, smp: { keys: new SmpKeys(checkedKey(pems.key, pems.cert, true)) } },
      async () => recordingStatements(await openTestDatabase(), sent),
    );
    try {
      const organizations = [
        await addParticipant(off.app, off.users.serviceProvider),
        await addParticipant(off.app, off.users.serviceProvider),
      ];
      const serviceGroupReads = () => sent.filter((sql) => sql.includes('AS receivers')).length;
      const statementsOfLookups = async () => {
        const before = serviceGroupReads();
        for (const { qualifiedIdentifier } of organizations) {
          const answer = await off.app.inject({ url: `/${encodeURIComponent(qualifiedIdentifier)}` });
          expect(answer.statusCode, answer.body).toBe(200);
        }
        return serviceGroupReads() - before;
      };
      const participantsInMemory = async () =>
        (await off.app.metrics.getSingleMetric('participant_search_memory_participants')?.get())?.values[0]?.value;
      expect(await statementsOfLookups()).toBe(2);

      // A promoted standby that had not received the last entry: its log ends before it, and its next change takes its position.
      await off.db.transaction(async (tx) => {
        await tx.query('DELETE FROM change_log WHERE seq = (SELECT seq FROM change_log_position)');
        await tx.query('UPDATE change_log_position SET seq = seq - 1');
      });
      organizations.push(await addParticipant(off.app, off.users.serviceProvider));
      // The write has caught this instance up with the replaced log; whatever it would load has loaded.
      await vi.waitFor(() => expect(off.app.heldParticipants.state).not.toBe('loading'));
      expect(await statementsOfLookups()).toBe(3);
      expect(await participantsInMemory()).toBe(0);
    } finally {
      await off.close();
    }
  });
});

describe('the changes the search in memory reads', () => {
  /** An index of the test database whose reloads of changed organizations are counted. */
  async function countedIndex(reloadDelayMs: number) {
    const reads = { count: 0 };
    const db: Queryable = {
      ...t.db,
      query: (sql, params) => {
        if (sql.includes('unnest($1::text[], $2::text[])')) reads.count += 1;
        return t.db.query(sql, params);
      },
    };
    const index = new HeldParticipants(
      db,
      (error) => {
        throw error;
      },
      reloadDelayMs,
    );
    await index.load();
    return { index, reads };
  }

  const noticeOf = (participant: Participant, seq: number): ChangeNotice => ({
    seq,
    resource: 'participant',
    identifier: participant.qualifiedIdentifier,
    operation: 'create',
  });
  /** The search for the participants these tests add, as the authority asks it. */
  const samletSearch = () => ({
    filter: { query: 'samlet', processes: false },
    page: pageRequest({ page: 0, size: 30, sort: undefined }, PARTICIPANT_SORTABLE, PARTICIPANT_TIE_BREAKER),
  });

  it('reads the organizations changed one by one at once, when a search comes', async () => {
    const { index, reads } = await countedIndex(600_000);
    try {
      const added: Participant[] = [];
      for (let n = 0; n < 10; n += 1) {
        added.push(await addParticipant(t.app, one, { name: `Samlet ${n} AS` }));
        index.onChange(noticeOf(added[n] as Participant, n + 1));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(reads.count).toBe(0);
      const { filter, page } = samletSearch();
      const answer = await index.search(filter, null, page);
      expect(reads.count).toBe(1);
      expect(answer !== NOT_HELD && answer.total).toBe(10);
    } finally {
      index.stop();
    }
  });

  it('reads a change by itself a while later when no search comes', async () => {
    const { index, reads } = await countedIndex(50);
    try {
      const added = await addParticipant(t.app, one, { name: 'Samlet alene AS' });
      const size = index.size;
      index.onChange(noticeOf(added, 1));
      await vi.waitFor(() => expect(reads.count).toBe(1), { timeout: 10_000, interval: 20 });
      await vi.waitFor(() => expect(index.size).toBe(size + 1), { timeout: 10_000, interval: 20 });
    } finally {
      index.stop();
    }
  });
});
