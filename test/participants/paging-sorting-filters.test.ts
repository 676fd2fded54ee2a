import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { PARTICIPANT_SORTABLE, streamParticipants } from '../../src/participants/repository.js';
import type { ParticipantFilter } from '../../src/participants/schemas.js';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { expectErrorBody, expectFieldError, expectSecurityHeaders } from '../helpers/assertions.js';
import { addProcess } from '../helpers/catalogue.js';
import { addParticipant, dayFromToday, PARTICIPANTS, type Participant } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';

let t: TestApp;
let admin: TestUser;
let one: TestUser;
let two: TestUser;
const all: Participant[] = [];
let processIdentifier: string;

const STREAM = 'application/vnd.registry.participants.stream.v1+json';

interface Row {
  icd: string;
  org: string;
  name?: string;
  part?: string;
  source?: string;
  contact: { name: string; email?: string; phoneNumber?: string };
  modified: number;
  registered: number;
  deleteIn?: number;
  second?: boolean;
}

/**
 * Values that sort alike in every collation: they differ first at a letter or a digit. Their ICDs have no value rule
 * (src/participants/value-rules.ts), or one the values keep (9915: a letter, then letters or digits), so they can be words.
 */
const ROWS: Row[] = [
  {
    icd: '9913',
    org: 'abc100',
    name: 'Fjord Shipping',
    part: 'k1',
    source: '4',
    contact: { name: 'hanna', email: 'h@x.example', phoneNumber: '5' },
    modified: -5,
    registered: -30,
    deleteIn: 40,
  },
  {
    icd: '9913',
    org: 'abc200',
    name: 'Bergen Fisk',
    source: '1',
    contact: { name: 'dag', email: 'd@x.example' },
    modified: -3,
    registered: -30,
  },
  {
    icd: '0028',
    org: 'abd300',
    name: 'Kystverket Fjordlinje',
    part: 'a9',
    contact: { name: 'ola', phoneNumber: '2' },
    modified: -4,
    registered: -20,
  },
  {
    icd: '0028',
    org: 'zz400',
    name: 'Bergen Fisk',
    source: '7',
    contact: { name: 'berit', email: 'b@x.example', phoneNumber: '9' },
    modified: -2,
    registered: -25,
    deleteIn: 10,
  },
  {
    icd: '9915',
    org: 'mno500',
    name: '100% Fisk',
    part: 'c3',
    contact: { name: 'erik' },
    modified: -6,
    registered: -6,
  },
  { icd: '9913', org: '7x600', contact: { name: 'anne', email: 'a@x.example' }, modified: -3, registered: -10 },
  {
    icd: '9905',
    org: 'q700',
    name: 'Lofoten Tran',
    source: '0',
    contact: { name: 'cecilie', email: 'c@x.example', phoneNumber: '1' },
    modified: -1,
    registered: -1,
    deleteIn: 5,
  },
  {
    icd: '9913',
    org: 'abc800',
    name: 'Sogn Frukt',
    part: 'z0',
    contact: { name: 'ivar' },
    modified: -5,
    registered: -40,
    second: true,
  },
  {
    icd: '0028',
    org: 'fjord900',
    name: 'Tromso Is',
    contact: { name: 'jon', email: 'j@x.example' },
    modified: -8,
    registered: -9,
    second: true,
  },
  {
    icd: '9915',
    org: 'r1000',
    name: 'Voss Vann',
    source: '3',
    contact: { name: 'kari', phoneNumber: '4' },
    modified: -3,
    registered: -3,
    second: true,
  },
];
const mineCount = ROWS.filter((row) => !row.second).length;

beforeAll(async () => {
  t = await startTestApp();
  ({ admin, serviceProvider: one, otherServiceProvider: two } = t.users);
  processIdentifier = (await addProcess(t.app, admin)).identifier;
  for (const [index, row] of ROWS.entries()) {
    const created = await addParticipant(t.app, row.second ? two : one, {
      icd: row.icd,
      organizationIdentifier: row.org,
      name: row.name,
      organizationPartIdentifier: row.part,
      sourceIndicator: row.source,
      contact: row.contact,
      deleteDate: row.deleteIn === undefined ? undefined : dayFromToday(row.deleteIn),
      processes: index === 0 ? [{ identifier: processIdentifier }] : [],
    });
    await t.db.query('UPDATE participants SET last_modification_date = $2, registration_date = $3 WHERE id = $1', [
      created.identifier,
      dayFromToday(row.modified),
      dayFromToday(row.registered),
    ]);
  }
  // The dates were set past the API and its change log: the search in memory reads them as a restart would.
  await t.app.heldParticipants.load();
  expect(t.app.heldParticipants.state).toBe('ready');
  const everything = await call(t.app, { url: `${PARTICIPANTS}?size=2000&processes=true`, user: admin });
  all.push(...everything.json().content);
  expect(all).toHaveLength(ROWS.length);
});
afterAll(() => t.close());

const identifiers = (items: Participant[]) => items.map((item) => item.identifier);
const organizations = (items: Participant[]) => items.map((item) => item.organizationIdentifier).sort();

async function found(query: string, user = admin): Promise<Participant[]> {
  const response = await call(t.app, { url: `${PARTICIPANTS}?${query}&size=2000`, user });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().content;
}

/** A property by its sort path; the parts of the qualified identifier string are sorted as scheme and value. */
function valueAt(item: Participant, path: string): string | null {
  const [scheme, value] = item.qualifiedIdentifier.split('::');
  if (path === 'qualifiedIdentifier.scheme') return scheme as string;
  if (path === 'qualifiedIdentifier.value') return value as string;
  return path
    .split('.')
    .reduce<unknown>((value, key) => (value as Record<string, unknown> | null)?.[key] ?? null, item) as string | null;
}

/** The order the service must produce: nulls last ascending and first descending, ties by identifier. */
function sortedBy(items: Participant[], path: string, direction: 'ASC' | 'DESC'): string[] {
  const sign = direction === 'ASC' ? 1 : -1;
  return [...items]
    .sort((a, b) => {
      const [x, y] = [valueAt(a, path), valueAt(b, path)];
      if (x === y) return a.identifier < b.identifier ? -1 : 1;
      if (x === null) return sign;
      if (y === null) return -sign;
      return (x < y ? -1 : 1) * sign;
    })
    .map((item) => item.identifier);
}

describe('paging', () => {
  it('pages through every participant with the envelope of the specification', async () => {
    const response = await call(t.app, {
      url: `${PARTICIPANTS}?size=3&page=1`,
      user: admin,
      headers: { accept: 'application/vnd.registry.participants.find.v1+json' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/vnd.registry.participants.find.v1+json;charset=UTF-8');
    expectSecurityHeaders(response);
    const page = response.json();
    const unsorted = { sorted: false, unsorted: true, empty: true };
    expect(page).toMatchObject({
      totalElements: ROWS.length,
      totalPages: 4,
      first: false,
      last: false,
      numberOfElements: 3,
      size: 3,
      number: 1,
      empty: false,
      sort: unsorted,
      pageable: { pageNumber: 1, pageSize: 3, offset: 3, paged: true, unpaged: false, sort: unsorted },
    });
    expect(identifiers(page.content)).toEqual(sortedBy(all, 'identifier', 'ASC').slice(3, 6));
    const last = (await call(t.app, { url: `${PARTICIPANTS}?size=3&page=3`, user: admin })).json();
    expect(last).toMatchObject({ last: true, numberOfElements: 1 });
    const beyond = (await call(t.app, { url: `${PARTICIPANTS}?size=3&page=9`, user: admin })).json();
    expect(beyond).toMatchObject({ content: [], empty: true, numberOfElements: 0, totalElements: ROWS.length });
  });

  it('defaults to page 0 of 30 and refuses a negative page or a size below 1', async () => {
    const page = (await call(t.app, { url: PARTICIPANTS, user: admin })).json();
    expect(page).toMatchObject({ number: 0, size: 30, first: true, last: true, totalPages: 1 });
    expectFieldError(
      expectErrorBody(await call(t.app, { url: `${PARTICIPANTS}?page=-1`, user: admin }), 400),
      'queryParameters',
      'page',
      'Min',
    );
    expectFieldError(
      expectErrorBody(await call(t.app, { url: `${PARTICIPANTS}?size=0`, user: admin }), 400),
      'queryParameters',
      'size',
      'Min',
    );
  });

  it('leaves processes out unless processes=true, and shows the provider', async () => {
    const [first] = await found('query=abc100');
    expect(first).not.toHaveProperty('processes');
    expect(first?.provider).toEqual({ identifier: t.fixture.serviceProviderId, title: 'Provider One' });
    const [withProcesses] = await found('query=abc100&processes=true');
    expect(withProcesses?.processes).toEqual([expect.objectContaining({ identifier: processIdentifier })]);
    const [none] = await found('query=abc200&processes=true');
    expect(none?.processes).toEqual([]);
  });
});

describe('sorting', () => {
  it.each(Object.keys(PARTICIPANT_SORTABLE))(
    'sorts by %s both ways, ties by identifier, across pages',
    async (property) => {
      for (const direction of ['ASC', 'DESC'] as const) {
        const expected = sortedBy(all, property, direction);
        const pages: Participant[] = [];
        for (let page = 0; page < 3; page += 1) {
          const response = (
            await call(t.app, {
              url: `${PARTICIPANTS}?sort=${property},${direction.toLowerCase()}&size=4&page=${page}`,
              user: admin,
            })
          ).json();
          expect(response.sort).toEqual({ sorted: true, unsorted: false, empty: false });
          pages.push(...response.content);
        }
        expect(identifiers(pages), `${property} ${direction}`).toEqual(expected);
      }
    },
  );

  it('sorts by several properties, each parameter with its own direction', async () => {
    const content = await found('sort=icd,desc&sort=name');
    const expected = [...all].sort((a, b) => {
      if (a.icd !== b.icd) return a.icd < b.icd ? 1 : -1;
      const [x, y] = [valueAt(a, 'name'), valueAt(b, 'name')];
      if (x === y) return a.identifier < b.identifier ? -1 : 1;
      if (x === null) return 1;
      if (y === null) return -1;
      return x < y ? -1 : 1;
    });
    expect(identifiers(content)).toEqual(identifiers(expected));
  });

  it('refuses an unknown property', async () => {
    const body = expectErrorBody(await call(t.app, { url: `${PARTICIPANTS}?sort=password`, user: admin }), 400);
    expect(body.errors).toEqual([
      expect.objectContaining({ field: 'sort', code: 'InvalidSortProperty', rejectedValue: 'password' }),
    ]);
  });
});

describe('filters', () => {
  it('query: a case-insensitive part of the name, or the start of the organization identifier', async () => {
    expect(organizations(await found('query=FJORDLINJE'))).toEqual(['abd300']);
    expect(organizations(await found('query=ShIpPiNg'))).toEqual(['abc100']);
    expect(organizations(await found('query=abc'))).toEqual(['abc100', 'abc200', 'abc800']);
    expect(organizations(await found('query=ABD3'))).toEqual(['abd300']);
    expect(organizations(await found('query=bc1'))).toEqual([]);
    expect(organizations(await found('query=fjord9'))).toEqual(['fjord900']);
    expect(organizations(await found('query=fjord'))).toEqual(['abc100', 'abd300', 'fjord900']);
  });

  it('query pages like any search: sorted, the exact total on every page, also past the last hit', async () => {
    const page = (number: number) =>
      call(t.app, {
        url: `${PARTICIPANTS}?query=fjord&sort=organizationIdentifier,desc&size=2&page=${number}`,
        user: admin,
      }).then((response) => response.json());
    expect(await page(0)).toMatchObject({ totalElements: 3, numberOfElements: 2 });
    const organizationsOf = (body: { content: Participant[] }) =>
      body.content.map((item) => item.organizationIdentifier);
    expect(organizationsOf(await page(0))).toEqual(['fjord900', 'abd300']);
    expect(organizationsOf(await page(1))).toEqual(['abc100']);
    expect(await page(5)).toMatchObject({ content: [], totalElements: 3 });
  });

  it('search is an alias of query', async () => {
    expect(organizations(await found('search=bergen'))).toEqual(['abc200', 'zz400']);
  });

  it('query takes % and _ literally', async () => {
    expect(organizations(await found(`query=${encodeURIComponent('0%')}`))).toEqual(['mno500']);
    expect(organizations(await found(`query=${encodeURIComponent('a_c')}`))).toEqual([]);
  });

  it('icd matches exactly and refuses an unknown ICD', async () => {
    expect(organizations(await found('icd=0028'))).toEqual(['abd300', 'fjord900', 'zz400']);
    expectFieldError(
      expectErrorBody(await call(t.app, { url: `${PARTICIPANTS}?icd=1234`, user: admin }), 400),
      'queryParameters',
      'icd',
      'Icd',
    );
  });

  it('lastModificationDate matches one day; From and To are inclusive', async () => {
    expect(organizations(await found(`lastModificationDate=${dayFromToday(-3)}`))).toEqual([
      '7x600',
      'abc200',
      'r1000',
    ]);
    expect(organizations(await found(`lastModificationDateFrom=${dayFromToday(-3)}`))).toEqual([
      '7x600',
      'abc200',
      'q700',
      'r1000',
      'zz400',
    ]);
    expect(organizations(await found(`lastModificationDateTo=${dayFromToday(-5)}`))).toEqual([
      'abc100',
      'abc800',
      'fjord900',
      'mno500',
    ]);
    expect(
      organizations(
        await found(`lastModificationDateFrom=${dayFromToday(-5)}&lastModificationDateTo=${dayFromToday(-4)}`),
      ),
    ).toEqual(['abc100', 'abc800', 'abd300']);
    expect(
      organizations(
        await found(`lastModificationDateFrom=${dayFromToday(-2)}&lastModificationDateTo=${dayFromToday(-4)}`),
      ),
    ).toEqual([]);
    const body = expectErrorBody(
      await call(t.app, { url: `${PARTICIPANTS}?lastModificationDate=2026-13-40`, user: admin }),
      400,
    );
    expectFieldError(body, 'queryParameters', 'lastModificationDate', 'typeMismatch');
  });

  it('filters combine', async () => {
    expect(organizations(await found(`query=abc&icd=9913&lastModificationDate=${dayFromToday(-5)}`))).toEqual([
      'abc100',
      'abc800',
    ]);
  });

  it('a service provider finds only its own participants; ADMIN and REGISTRY_AUTHORITY find all', async () => {
    expect(await found('', one)).toHaveLength(mineCount);
    expect(organizations(await found('', two))).toEqual(['abc800', 'fjord900', 'r1000']);
    expect(await found('', t.users.authority)).toHaveLength(ROWS.length);
    expect(organizations(await found('query=abc', two))).toEqual(['abc800']);
  });
});

describe('participants.stream', () => {
  async function allPages(query: string, user: TestUser): Promise<Participant[]> {
    const items: Participant[] = [];
    for (let page = 0; ; page += 1) {
      const response = (await call(t.app, { url: `${PARTICIPANTS}?${query}&size=3&page=${page}`, user })).json();
      items.push(...response.content);
      if (response.last) return items;
    }
  }

  it.each([
    ['', 'admin'],
    ['sort=name,desc', 'admin'],
    ['query=abc&sort=lastModificationDate&sort=organizationIdentifier,desc', 'authority'],
    [`lastModificationDateFrom=${dayFromToday(-5)}&processes=true&sort=qualifiedIdentifier.value`, 'serviceProvider'],
    ['icd=0028&sort=provider.title', 'otherServiceProvider'],
  ] as const)('is the union of all pages for "%s" (%s)', async (query, role) => {
    const user = t.users[role];
    const stream = await call(t.app, {
      url: `${PARTICIPANTS}?${query}&size=1&page=2`,
      user,
      headers: { accept: STREAM },
    });
    expect(stream.statusCode, stream.body).toBe(200);
    expect(stream.headers['content-type']).toBe(`${STREAM};charset=UTF-8`);
    expectSecurityHeaders(stream);
    const pages = await allPages(query, user);
    expect(pages.length).toBeGreaterThan(0);
    expect(stream.json()).toEqual(pages);
  });

  it('with its processes, reads every participant once and in order, in batches within the byte budget', async () => {
    // The database as the stream sees it, but noting the size (as text) of every row of the statement it streams.
    let rowBytes: number[] = [];
    const measuring: Database = {
      ...t.db,
      stream: (sql, params, batchSize, maxBytes) => {
        const sizes = t.db.query<{ bytes: number }>(`SELECT octet_length(r::text) AS bytes FROM (${sql}) r`, params);
        return (async function* () {
          rowBytes = (await sizes).map((row) => row.bytes);
          yield* t.db.stream(sql, params, batchSize, maxBytes);
        })();
      },
    };
    const read = async (maxBytes: number) => {
      const batches: Participant[][] = [];
      for await (const batch of streamParticipants(
        measuring,
        { processes: true } as ParticipantFilter,
        null,
        'ORDER BY pa.id',
        maxBytes,
      )) {
        batches.push(batch as Participant[]);
      }
      return batches;
    };
    await read(Number.MAX_SAFE_INTEGER);
    const budget = Math.max(...rowBytes) + 1; // every row fits alone, and three of the small ones together

    const batches = await read(budget);
    expect(batches.flat()).toEqual([...all].sort((a, b) => (a.identifier < b.identifier ? -1 : 1)));
    expect(batches.length).toBeGreaterThan(1);
    let row = 0;
    for (const batch of batches) {
      const bytes = rowBytes.slice(row, row + batch.length).reduce((sum, size) => sum + size, 0);
      row += batch.length;
      expect(bytes).toBeLessThanOrEqual(budget);
    }
  });

  it('is an empty array when nothing matches, and validates like the paged variant', async () => {
    expect(
      (await call(t.app, { url: `${PARTICIPANTS}?query=nothing-like-this`, user: admin, headers: { accept: STREAM } }))
        .body,
    ).toBe('[]');
    expectErrorBody(
      await call(t.app, { url: `${PARTICIPANTS}?sort=nope`, user: admin, headers: { accept: STREAM } }),
      400,
    );
    expectErrorBody(
      await call(t.app, { url: PARTICIPANTS, user: t.users.accessPointProvider, headers: { accept: STREAM } }),
      403,
    );
  });
});
