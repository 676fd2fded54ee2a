import { describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { sweepExpiredParticipants } from '../../src/participants/expiry.js';
import type { LocalSml } from '../../dev/local-sml.js';
import type { LocalDirectory } from '../../dev/local-directory.js';
import type { Database } from '../../src/db/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import type { TestApp } from '../helpers/app.js';
import { expectStatus } from '../helpers/administration.js';
import { addParticipant, dayFromToday, today, type Participant } from '../helpers/participants.js';
import { TEST_DATABASE_URL, testDatabaseKind } from '../helpers/database.js';
import { SMP_ID, useDeliveryTestApp } from '../helpers/delivery.js';

let t: TestApp;
let sml: LocalSml;
let directory: LocalDirectory;
let app: App;
useDeliveryTestApp((started) => ({ t, sml, directory, app } = started));

const held = () => sml.registrations.get(SMP_ID) ?? new Set<string>();
const delivered = () =>
  vi.waitFor(
    async () => {
      const statuses: Array<{ pending: number }> = expectStatus(
        await t.app.inject({
          method: 'GET',
          url: '/rest/api/deliveries',
          headers: { authorization: t.users.authority.authorization },
        }),
        200,
      );
      expect(statuses.map((entry) => entry.pending)).toEqual([0, 0]);
    },
    { timeout: 10_000, interval: 50 },
  );

/** A registered participant (delivered to the SML and the Directory) whose delete date the database says was yesterday. */
async function expiredYesterday(
  user = t.users.serviceProvider,
  overrides: Record<string, unknown> = {},
): Promise<Participant> {
  const participant = await addParticipant(app, user, overrides);
  await delivered();
  expect(held().has(participant.qualifiedIdentifier)).toBe(true);
  await t.db.query('UPDATE participants SET delete_date = $2::date WHERE id = $1', [
    participant.identifier,
    dayFromToday(-1),
  ]);
  return participant;
}

interface Entry {
  operation: string;
  origin: string;
  before: { identifier: string } | null;
  after: unknown;
}
const entriesOf = (participant: Participant) =>
  t.db.query<Entry>(
    'SELECT operation, origin, change_log_state(before) AS before, change_log_state(after) AS after FROM change_log WHERE identifier = $1 ORDER BY id',
    [participant.qualifiedIdentifier],
  );

describe('expiry of participants whose delete date has come', () => {
  it('logs one expiry, deletes the organization from the SML and the Directory, and a second sweep finds nothing', async () => {
    const calls = { ...sml.calls };
    const participant = await expiredYesterday();
    expect(await sweepExpiredParticipants(app.db, today())).toBe(1);
    expect(await sweepExpiredParticipants(app.db, today())).toBe(0);
    const entries = await entriesOf(participant);
    expect(entries.map((entry) => entry.operation)).toEqual(['create', 'expire']);
    expect(entries[1]).toMatchObject({
      origin: 'system',
      before: { identifier: participant.identifier, deleteDate: dayFromToday(-1) },
      after: null,
    });
    await delivered();
    expect(held().has(participant.qualifiedIdentifier)).toBe(false);
    expect(sml.calls.delete - calls.delete).toBe(1);
    expect(directory.indexed.has(participant.qualifiedIdentifier)).toBe(false);
  });

  it("leaves a participant whose delete date is today's for that day's sweep, not the day before's", async () => {
    const participant = await addParticipant(app, t.users.serviceProvider);
    await t.db.query('UPDATE participants SET delete_date = $2::date WHERE id = $1', [participant.identifier, today()]);
    expect(await sweepExpiredParticipants(app.db, dayFromToday(-1))).toBe(0);
    expect(await sweepExpiredParticipants(app.db, today())).toBe(1);
    expect((await entriesOf(participant)).map((entry) => entry.operation)).toEqual(['create', 'expire']);
    await delivered();
  });

  it("keeps the SML registration of an organization that another provider's participant still holds", async () => {
    const staying = await addParticipant(app, t.users.otherServiceProvider);
    const expired = await expiredYesterday(t.users.serviceProvider, {
      organizationIdentifier: staying.organizationIdentifier,
    });
    const calls = { ...sml.calls };
    expect(await sweepExpiredParticipants(app.db, today())).toBe(1);
    expect((await entriesOf(expired)).map((entry) => entry.operation)).toEqual(['create', 'create', 'expire']);
    await delivered();
    expect(held().has(staying.qualifiedIdentifier)).toBe(true);
    expect(sml.calls.delete - calls.delete).toBe(0);
    expect(directory.indexed.has(staying.qualifiedIdentifier)).toBe(true);
  });

  it("logs the expiry of an organization's expired participant that a new registration clears away before the sweep", async () => {
    const expired = await expiredYesterday();
    const newcomer = await addParticipant(app, t.users.otherServiceProvider, {
      organizationIdentifier: expired.organizationIdentifier,
    });
    const entries = await entriesOf(expired);
    expect(entries.map((entry) => entry.operation)).toEqual(['create', 'expire', 'create']);
    expect(entries[1]?.before?.identifier).toBe(expired.identifier);
    expect(await sweepExpiredParticipants(app.db, today())).toBe(0);
    await delivered();
    expect(held().has(newcomer.qualifiedIdentifier)).toBe(true);
  });

  it('lets a provider register again an organization whose participant of its own has expired before the sweep', async () => {
    const expired = await expiredYesterday();
    const again = await addParticipant(app, t.users.serviceProvider, {
      organizationIdentifier: expired.organizationIdentifier,
    });
    expect(again.identifier).not.toBe(expired.identifier);
    expect(again.processes).toEqual(expired.processes);
    expect((await entriesOf(expired)).map((entry) => entry.operation)).toEqual(['create', 'expire', 'create']);
    expect(await sweepExpiredParticipants(app.db, today())).toBe(0);
    await delivered();
    expect(held().has(again.qualifiedIdentifier)).toBe(true);
  });

  it('expires each participant once when two sweeps run at once', async () => {
    const calls = { ...sml.calls };
    const expired = [];
    for (let index = 0; index < 6; index += 1) expired.push(await expiredYesterday());
    const second = testDatabaseKind === 'postgres' ? await otherInstanceDatabase() : t.db;
    try {
      const counts = await Promise.all([
        sweepExpiredParticipants(t.db, today()),
        sweepExpiredParticipants(second, today()),
      ]);
      expect(counts[0] + counts[1]).toBe(6);
    } finally {
      if (second !== t.db) await second.close();
    }
    for (const participant of expired) {
      expect((await entriesOf(participant)).filter((entry) => entry.operation === 'expire')).toHaveLength(1);
    }
    await delivered();
    expect(sml.calls.delete - calls.delete).toBe(6);
    for (const participant of expired) expect(held().has(participant.qualifiedIdentifier)).toBe(false);
  });
});

/** A second instance's own connection pool on the same PostgreSQL schema. */
async function otherInstanceDatabase(): Promise<Database> {
  const [schema] = await t.db.query<{ name: string }>('SELECT current_schema() AS name');
  return openPostgres({ connectionString: TEST_DATABASE_URL, schema: `${schema?.name},public`, maxConnections: 4 });
}
