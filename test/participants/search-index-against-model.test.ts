import { describe, expect, it } from 'vitest';
import {
  ParticipantSearchIndex,
  type IndexedFilter,
  type IndexedRow,
  type IndexedSearch,
} from '../../src/participants/search-index.js';

/** A seeded generator, so that a failure repeats. */
function randomOf(seed: number) {
  let state = seed;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  return {
    below: (n: number) => Math.floor(next() * n),
    pick: <T>(list: readonly T[]) => list[Math.floor(next() * list.length)] as T,
  };
}

const WORDS = [
  'bygg',
  'fjord',
  'fisk',
  'as',
  'rør',
  'bygger',
  'ås',
  'nord',
  'sør',
  'ba',
  '100%',
  'a_b',
  '𝔘nicode',
  'ggb',
];
const ICDS = ['0192', '0007', '9908'];
const PROVIDERS = [
  '11111111-1111-4111-8111-111111111111',
  '22222222-2222-4222-8222-222222222222',
  '33333333-3333-4333-8333-333333333333',
];
const TODAY = 20_000;
const PROCESSES = [
  'aaaaaaaa-0000-4000-8000-000000000001',
  'aaaaaaaa-0000-4000-8000-000000000002',
  'aaaaaaaa-0000-4000-8000-000000000003',
  'aaaaaaaa-0000-4000-8000-000000000004',
];

function uuid(random: ReturnType<typeof randomOf>): string {
  const hex = Array.from({ length: 32 }, () => '0123456789abcdef'[random.below(16)]).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function rowOf(
  random: ReturnType<typeof randomOf>,
  icd: string,
  organizationIdentifier: string,
  provider: string,
): IndexedRow {
  const words = Array.from({ length: 1 + random.below(4) }, () => random.pick(WORDS));
  return {
    id: uuid(random),
    icd,
    organizationIdentifier,
    serviceProviderId: provider,
    nameLower: random.below(10) === 0 ? null : words.join(random.pick([' ', '', '-'])),
    lastModificationDay: TODAY - random.below(30),
    deleteDay: random.below(5) === 0 ? TODAY - 2 + random.below(4) : null,
    processes: PROCESSES.filter(() => random.below(2) === 0).map((id) => [id, TODAY - random.below(3)] as const),
  };
}

/** Whether the database's search finds `row` by the filters besides the text. */
const filtered = (row: IndexedRow, filter: IndexedFilter) =>
  (row.deleteDay === null || row.deleteDay > filter.today) &&
  (filter.icd === undefined || row.icd === filter.icd) &&
  (filter.providerId === null || row.serviceProviderId === filter.providerId) &&
  row.lastModificationDay >= (filter.modifiedFrom ?? -Infinity) &&
  row.lastModificationDay <= (filter.modifiedTo ?? Infinity);

/** What the database's service group reads of an organization's rows: its live ones' providers and processes. */
function expectedLiveParticipants(rows: readonly IndexedRow[], today: number) {
  const live = rows.filter((row) => row.deleteDay === null || row.deleteDay > today);
  if (live.length === 0) return undefined;
  const deleteDays = live.flatMap((row) => row.deleteDay ?? []);
  return {
    participants: live
      .map((row) => ({ provider: row.serviceProviderId, processes: row.processes.map(([id]) => id).sort() }))
      .sort((a, b) => a.provider.localeCompare(b.provider)),
    nextDeleteDay: deleteDays.length === 0 ? null : Math.min(...deleteDays),
  };
}

/** What the database's organization processes read: each process of its live rows once, with its first day. */
function expectedProcessesSince(rows: readonly IndexedRow[], today: number) {
  const live = rows.filter((row) => row.deleteDay === null || row.deleteDay > today);
  if (live.length === 0) return undefined;
  const since = new Map<string, number>();
  for (const [id, day] of live.flatMap((row) => row.processes)) since.set(id, Math.min(day, since.get(id) ?? day));
  return since;
}

/** What the database's search finds: the same conditions, over every row, sorted by identifier. */
function expected(rows: Iterable<IndexedRow>, search: IndexedSearch) {
  const hits = [...rows]
    .filter(
      (row) =>
        (row.nameLower?.includes(search.text) === true || row.organizationIdentifier.startsWith(search.text)) &&
        filtered(row, search),
    )
    .map((row) => row.id)
    .sort();
  return { total: hits.length, ids: hits.slice(search.offset, search.offset + search.size) };
}

describe('the participant search in memory', () => {
  it("finds what the database finds after a load, through adds, changes, a second provider and removals, and each organization's receivers and processes", () => {
    const random = randomOf(7);
    const index = new ParticipantSearchIndex();
    /** Held rows by organization key, then by id. */
    const held = new Map<string, IndexedRow[]>();
    const organizations = Array.from({ length: 300 }, (_, n) => ({
      icd: random.pick(ICDS),
      organizationIdentifier: random.pick(['', 'by', 'fj', '99']) + String(100000 + n * 37),
    }));
    const queries = [
      ...WORDS,
      'ygg',
      'yggb',
      'gg-f',
      'by',
      'byg',
      '991',
      '1000',
      'org',
      'sør as',
      '%',
      'zzz',
      '00',
      'a_b',
      '𝔘ni',
    ];
    // Half of them loaded first, as at a start: listed all at once when the load finishes.
    for (const organization of organizations.slice(0, 150)) {
      const rows = PROVIDERS.slice(0, 1 + random.below(2)).map((provider) =>
        rowOf(random, organization.icd, organization.organizationIdentifier, provider),
      );
      for (const row of rows) index.load(row);
      held.set(`${organization.icd}:${organization.organizationIdentifier}`, rows);
    }
    index.finishLoad();
    for (let step = 0; step < 3000; step += 1) {
      const organization = random.pick(organizations);
      const key = `${organization.icd}:${organization.organizationIdentifier}`;
      const current = held.get(key) ?? [];
      const providers = PROVIDERS.filter(() => random.below(3) > 0).slice(0, random.below(3));
      const rows = providers.map((provider) => {
        const kept = current.find((row) => row.serviceProviderId === provider);
        const fresh = rowOf(random, organization.icd, organization.organizationIdentifier, provider);
        return kept && random.below(2) === 0 ? { ...fresh, id: kept.id } : fresh;
      });
      index.replaceOrganization(organization.icd, organization.organizationIdentifier, rows);
      held.set(key, rows);
      if (step % 100 !== 99) continue;
      const all = [...held.values()].flat();
      expect(index.size).toBe(all.length);
      for (const text of queries) {
        if (!ParticipantSearchIndex.answers(text)) continue;
        const search: IndexedSearch = {
          text,
          today: TODAY,
          offset: random.pick([0, 0, 3, 1500]),
          size: random.pick([1, 30, 2000]),
          providerId: random.pick([null, ...PROVIDERS]),
          icd: random.pick([undefined, ...ICDS, '9999']),
          modifiedFrom: random.pick([undefined, TODAY - 10]),
          modifiedTo: random.pick([undefined, TODAY - 5]),
        };
        expect(index.search(search), JSON.stringify(search)).toEqual(expected(all, search));
      }
      for (let count = 0; count < 20; count += 1) {
        const filter: IndexedFilter = {
          today: TODAY + random.pick([0, 0, 1, 5]),
          providerId: random.pick([null, ...PROVIDERS, '44444444-4444-4444-8444-444444444444']),
          icd: random.pick([undefined, ...ICDS, '9999']),
          modifiedFrom: random.pick([undefined, TODAY - 10, TODAY - 3]),
          modifiedTo: random.pick([undefined, TODAY - 5, TODAY - 3]),
        };
        expect(index.countOf(filter), JSON.stringify(filter)).toBe(all.filter((row) => filtered(row, filter)).length);
      }
      for (const { icd, organizationIdentifier } of organizations.slice(0, 60)) {
        const today = TODAY + random.pick([-3, 0, 1]);
        const rows = held.get(`${icd}:${organizationIdentifier}`) ?? [];
        expect(
          index.liveParticipantsOf(icd, organizationIdentifier, today),
          `${icd}:${organizationIdentifier}`,
        ).toEqual(expectedLiveParticipants(rows, today));
        expect(index.processesSinceOf(icd, organizationIdentifier, today), `${icd}:${organizationIdentifier}`).toEqual(
          expectedProcessesSince(rows, today),
        );
      }
    }
  });

  it('keeps every list through the growth of their pool, which is copied without the room lists leave behind', () => {
    const index = new ParticipantSearchIndex();
    const rowAt = (n: number): IndexedRow => ({
      id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      icd: '0192',
      organizationIdentifier: String(900_000_000 + n),
      nameLower: `bygg ${n} ${n % 2 === 0 ? 'fjord' : 'fisk'}`,
      serviceProviderId: PROVIDERS[0] as string,
      lastModificationDay: TODAY,
      deleteDay: null,
      processes: [],
    });
    const search = (text: string) => index.search({ text, providerId: null, today: TODAY, offset: 0, size: 1 }).total;
    for (let n = 0; n < 3000; n += 1) index.load(rowAt(n));
    // Added while the load is under way: listed once, with the loaded ones.
    for (let n = 3000; n < 6000; n += 1) index.insert(rowAt(n));
    index.finishLoad();
    // Some 15 keys each: the pool of some 90,000 entries is outgrown and copied several times.
    for (let n = 6000; n < 30_000; n += 1) index.insert(rowAt(n));
    for (let n = 0; n < 30_000; n += 3) index.replaceOrganization('0192', String(900_000_000 + n), []);
    // Of 900029900 to 900029999, every third is gone.
    expect([search('bygg'), search('fjord'), search('fisk'), search('9000299')]).toEqual([20_000, 10_000, 10_000, 67]);
    expect([search('g 2999 f'), search('g 2997 f'), search('g 29998 '), search('g 29997 ')]).toEqual([1, 0, 1, 0]);
    const kept = Array.from({ length: 30_000 }, (_, n) => n)
      .filter((n) => n % 3 !== 0)
      .map((n) => rowAt(n).id);
    expect(index.search({ text: 'byg', providerId: null, today: TODAY, offset: 0, size: 30_000 }).ids).toEqual(kept);
  });

  it('counts a participant whose name and identifier both match once', () => {
    const index = new ParticipantSearchIndex();
    const row: IndexedRow = {
      id: '00000000-0000-4000-8000-000000000001',
      icd: '0192',
      organizationIdentifier: 'bygg1',
      nameLower: 'bygg as',
      serviceProviderId: PROVIDERS[0] as string,
      lastModificationDay: TODAY,
      deleteDay: null,
      processes: [],
    };
    index.insert(row);
    index.insert({
      ...row,
      id: '00000000-0000-4000-8000-000000000002',
      organizationIdentifier: 'bygg2',
      nameLower: 'other',
    });
    expect(index.search({ text: 'bygg', providerId: null, today: TODAY, offset: 0, size: 30 })).toEqual({
      total: 2,
      ids: ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'],
    });
  });

  it('does not answer a text shorter than a trigram, nor one holding its separator', () => {
    expect(ParticipantSearchIndex.answers('ab')).toBe(false);
    expect(ParticipantSearchIndex.answers('ab\u0000c')).toBe(false);
    expect(ParticipantSearchIndex.answers('abc')).toBe(true);
  });
});
