import { afterAll, beforeAll, expect, test } from 'vitest';
import { sentAhead, type Database } from '../../src/db/database.js';
import { openTestDatabase, testDatabaseKind } from '../helpers/database.js';

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => db?.close());

/** Resolves when both sides have arrived, so each transaction holds its first lock before taking the second. */
function barrier(parties: number) {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return () => {
    arrived += 1;
    if (arrived === parties) release();
    return all;
  };
}

test.skipIf(testDatabaseKind === 'embedded')(
  'a transaction that loses a deadlock is run again and both writes land',
  async () => {
    const [first, second] = await db.query<{ id: string }>(
      `INSERT INTO capabilities (title) VALUES ('first'), ('second') RETURNING id`,
    );
    const bothLocked = barrier(2);
    let attempts = 0;
    const lockInOrder = (a: string, b: string, title: string) =>
      db.transaction(async (tx) => {
        attempts += 1;
        await tx.query('UPDATE capabilities SET title = title WHERE id = $1', [a]);
        if (attempts <= 2) await bothLocked();
        await tx.query(`UPDATE capabilities SET title = $2 WHERE id = $1`, [b, title]);
      });

    await Promise.all([
      lockInOrder(first!.id, second!.id, 'written by one'),
      lockInOrder(second!.id, first!.id, 'written by two'),
    ]);

    // At least one run again; both, when the two backends' deadlock checks find the cycle at the same moment (seen once
    // under the full suite's load): either way both writes land.
    expect(attempts).toBeGreaterThanOrEqual(3);
    const titles = await db.query<{ title: string }>('SELECT title FROM capabilities ORDER BY title');
    expect(titles.map((row) => row.title)).toEqual(['written by one', 'written by two']);
  },
);

test('a transaction that fails leaves nothing behind', async () => {
  await expect(
    db.transaction(async (tx) => {
      await tx.query(`INSERT INTO capabilities (title) VALUES ('half-written')`);
      throw new Error('the request failed');
    }),
  ).rejects.toThrow('the request failed');
  expect(await db.query(`SELECT 1 FROM capabilities WHERE title = 'half-written'`)).toEqual([]);
});

test('a statement sent ahead that fails fails its transaction with its own error, and nothing of it is committed', async () => {
  const failing = () =>
    db.transaction(async (tx) => {
      await tx.query(`INSERT INTO capabilities (title) VALUES ('sent before')`);
      await sentAhead(tx, tx.query(`INSERT INTO capabilities (id, title) VALUES ('not a uuid', 'sent ahead')`));
      return 'told stored';
    });
  await expect(failing()).rejects.toThrow(/uuid/);
  // Statements after it fail as aborted: the error thrown is still the cause's.
  await expect(
    db.transaction(async (tx) => {
      await sentAhead(tx, tx.query(`INSERT INTO capabilities (id, title) VALUES ('not a uuid', 'sent ahead')`));
      await tx.query(`INSERT INTO capabilities (title) VALUES ('sent after')`);
    }),
  ).rejects.toThrow(/uuid/);
  expect(
    await db.query(`SELECT title FROM capabilities WHERE title IN ('sent before', 'sent ahead', 'sent after')`),
  ).toEqual([]);
});

test('a statement sent ahead that succeeds is committed with its transaction', async () => {
  await db.transaction(async (tx) => {
    await sentAhead(tx, tx.query(`INSERT INTO capabilities (title) VALUES ('sent ahead and kept')`));
  });
  expect(await db.query(`SELECT title FROM capabilities WHERE title = 'sent ahead and kept'`)).toEqual([
    { title: 'sent ahead and kept' },
  ]);
});

test('a stream reads every row of a query in batches', async () => {
  await db.query(`INSERT INTO capabilities (title) SELECT 'streamed ' || g FROM generate_series(1, 2345) g`);
  let count = 0;
  for await (const batch of db.stream(`SELECT id FROM capabilities WHERE title LIKE $1`, ['streamed %'], 1000))
    count += batch.length;
  expect(count).toBe(2345);
});

test('a stream with a byte budget reads every row once, in order, in batches within the budget', async () => {
  // Each row is about 105 bytes as text, `(n,` and 100 characters and `)`: a budget of 1,000 bytes holds 9 of them.
  const sql = `SELECT g AS n, repeat('x', 100) AS filler FROM generate_series(1, 50) g ORDER BY g`;
  const batches: number[][] = [];
  for await (const batch of db.stream<{ n: number }>(sql, [], 1000, 1000)) batches.push(batch.map((row) => row.n));
  expect(batches.flat()).toEqual(Array.from({ length: 50 }, (_, index) => index + 1));
  expect(batches.length).toBeGreaterThan(5);
  for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(9);
});

test('a stream with a byte budget still reads a row larger than the budget, alone', async () => {
  const sql = `SELECT g AS n, repeat('x', CASE WHEN g = 3 THEN 5000 ELSE 10 END) AS filler FROM generate_series(1, 6) g ORDER BY g`;
  const batches: number[][] = [];
  for await (const batch of db.stream<{ n: number }>(sql, [], 1000, 1000)) batches.push(batch.map((row) => row.n));
  expect(batches.flat()).toEqual([1, 2, 3, 4, 5, 6]);
  expect(batches.find((batch) => batch.includes(3))).toEqual([3]);
});
