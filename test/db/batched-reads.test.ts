import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchableRead, batchedReads } from '../../src/db/batched-reads.js';
import type { Database } from '../../src/db/database.js';
import { useTestApp } from '../helpers/app.js';
import { openTestDatabase } from '../helpers/database.js';
import { addParticipant, byQualified, type Participant } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';

describe('reads made at once share statements', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(async () => db?.close());

  /** `batchedReads` over the database, counting the statements it sends. */
  function countingReads() {
    const sent: string[] = [];
    const readOne = batchedReads(<T>(sql: string, params?: readonly unknown[]) => {
      sent.push(sql);
      return db.query<T>(sql, params);
    });
    return { readOne, sent };
  }

  const HALF_OF_EVEN = batchableRead('SELECT $1::int / 2 AS half, $2::text AS label WHERE $1::int % 2 = 0', [
    'int',
    'text',
  ]);
  const QUOTIENT = batchableRead('SELECT 60 / $1::int AS quotient', ['int']);

  it('gives each caller the row of its own parameters, or none, in fewer statements than calls', async () => {
    const { readOne, sent } = countingReads();
    const numbers = Array.from({ length: 40 }, (_, index) => index + 1);
    const rows = await Promise.all(numbers.map((n) => readOne(HALF_OF_EVEN, [n, `n${n}`])));
    expect(rows).toEqual(numbers.map((n) => (n % 2 === 0 ? { half: n / 2, label: `n${n}` } : undefined)));
    expect(sent.length).toBeLessThan(10);
  });

  it("fails every call at once, with the database's error, when the database cannot be reached", async () => {
    const sent: string[] = [];
    const readOne = batchedReads(async (sql: string) => {
      sent.push(sql);
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    const answers = await Promise.allSettled(Array.from({ length: 30 }, (_, n) => readOne(QUOTIENT, [n + 1])));
    expect(
      answers.map((answer) => (answer.status === 'rejected' ? (answer.reason as Error).message : 'answered')),
    ).toEqual(Array(30).fill('connect ECONNREFUSED 127.0.0.1:5432'));
    // One statement per batch, not one more per call.
    expect(sent.length).toBeLessThan(10);
  });

  it('fails only the call whose value fails the statement: the others are answered', async () => {
    const { readOne } = countingReads();
    const answers = await Promise.allSettled([1, 2, 0, 3, 4, 5, 6].map((n) => readOne(QUOTIENT, [n])));
    expect(answers.map((answer) => (answer.status === 'fulfilled' ? answer.value : 'failed'))).toEqual([
      { quotient: 60 },
      { quotient: 30 },
      'failed',
      { quotient: 20 },
      { quotient: 15 },
      { quotient: 12 },
      { quotient: 10 },
    ]);
  });
});

describe('participant reads made at once', () => {
  const t = useTestApp();
  let own: Participant[];
  let theirs: Participant;
  beforeAll(async () => {
    own = await Promise.all(Array.from({ length: 12 }, () => addParticipant(t.app, t.users.serviceProvider)));
    theirs = await addParticipant(t.app, t.users.otherServiceProvider);
  });

  it('keep each provider to its own participants, whatever they are read together with', async () => {
    const read = (participant: Participant) =>
      call(t.app, { method: 'GET', url: byQualified(participant.qualifiedIdentifier), user: t.users.serviceProvider });
    const byId = (participant: Participant) =>
      call(t.app, {
        method: 'GET',
        url: `/rest/api/participants/${participant.identifier}/processes`,
        user: t.users.serviceProvider,
      });
    const responses = await Promise.all([...own.map(read), read(theirs), ...own.map(byId), byId(theirs)]);
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses).toEqual([...own.map(() => 200), 404, ...own.map(() => 200), 404]);
    expect(responses.slice(0, own.length).map((response) => response.json().identifier)).toEqual(
      own.map((participant) => participant.identifier),
    );
  });
});
