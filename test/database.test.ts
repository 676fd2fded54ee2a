import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Database } from '../src/db/database.js';
import { openTestDatabase, testDatabaseKind } from './helpers/database.js';

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

test.skipIf(testDatabaseKind === 'embedded')('a transaction that loses a deadlock is run again and both writes land', async () => {
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

  expect(attempts).toBe(3);
  const titles = await db.query<{ title: string }>('SELECT title FROM capabilities ORDER BY title');
  expect(titles.map((row) => row.title)).toEqual(['written by one', 'written by two']);
});

test('a transaction that fails leaves nothing behind', async () => {
  await expect(db.transaction(async (tx) => {
    await tx.query(`INSERT INTO capabilities (title) VALUES ('half-written')`);
    throw new Error('the request failed');
  })).rejects.toThrow('the request failed');
  expect(await db.query(`SELECT 1 FROM capabilities WHERE title = 'half-written'`)).toEqual([]);
});

test('a stream reads every row of a query in batches', async () => {
  await db.query(`INSERT INTO capabilities (title) SELECT 'streamed ' || g FROM generate_series(1, 2345) g`);
  let count = 0;
  for await (const batch of db.stream(`SELECT id FROM capabilities WHERE title LIKE $1`, ['streamed %'], 1000)) count += batch.length;
  expect(count).toBe(2345);
});
