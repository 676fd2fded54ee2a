import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { asAdmin } from '../helpers/administration.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { testDatabaseKind } from '../helpers/database.js';

/** `sort` is bounded: each new ORDER BY used to become a prepared statement on every pool connection, kept for ever. */
const t = useTestApp();
const http = asAdmin(t);
const PARTICIPANTS = '/rest/api/participants';
const PROPERTIES = [
  'name',
  'icd',
  'organizationIdentifier',
  'organizationPartIdentifier',
  'sourceIndicator',
  'registrationDate',
  'lastModificationDate',
  'deleteDate',
  'contact.name',
];
const sortQuery = (terms: readonly string[]) => terms.map((term) => `sort=${encodeURIComponent(term)}`).join('&');

describe('sort terms', () => {
  it('8 distinct properties are sorted by; a ninth is a 400 on sort, whether in parameters of their own or in one', async () => {
    const response = await http.get(
      `${PARTICIPANTS}?${sortQuery(PROPERTIES.slice(0, 8).map((property, i) => `${property},${i % 2 ? 'desc' : 'asc'}`))}`,
    );
    expect(response.statusCode).toBe(200);
    expect(response.json().sort.sorted).toBe(true);
    for (const query of [sortQuery(PROPERTIES), sortQuery([PROPERTIES.join(',')])]) {
      const body = expectErrorBody(await http.get(`${PARTICIPANTS}?${query}`), 400);
      expectFieldError(body, 'queryParameters', 'sort', 'MaxSortTerms', 'at most 8 sort properties');
    }
  });

  it('a property sorted by twice is a 400 on sort, whatever its directions', async () => {
    for (const terms of [['name', 'name'], ['name,asc', 'icd', 'name,desc'], ['name,name,desc']]) {
      const body = expectErrorBody(await http.get(`${PARTICIPANTS}?${sortQuery(terms)}`), 400);
      const entry = expectFieldError(body, 'queryParameters', 'sort', 'DuplicateSortProperty');
      expect(entry.rejectedValue).toBe('name');
    }
  });

  it.runIf(testDatabaseKind === 'postgres')(
    "pages in orders of the client's choice leave no prepared statement on the connection",
    async () => {
      const orders = PROPERTIES.flatMap((first) =>
        PROPERTIES.filter((second) => second !== first).map((second) => [first, `${second},desc`]),
      );
      for (const terms of orders.slice(0, 40))
        expect((await http.get(`${PARTICIPANTS}?${sortQuery(terms)}`)).statusCode).toBe(200);
      // Requests one after the other take the pool's most recently released connection: the one asked here.
      const [row] = await t.db.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM pg_prepared_statements WHERE statement LIKE '%pa.contact_name%DESC%'",
      );
      expect(row?.count).toBe(0);
    },
  );
});
