import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { appendChange, SYSTEM_ACTOR, type ChangeNotice } from '../../src/db/change-log.js';
import { changeSignal } from '../../src/db/change-signal.js';
import { listenerName } from '../../src/db/postgres.js';
import { unique } from '../helpers/requests.js';
import { startOtherInstance, startTestApp, type TestApp } from '../helpers/app.js';
import { asAdmin, expectStatus } from '../helpers/administration.js';
import { addParticipant } from '../helpers/participants.js';
import { schemaOf, testDatabaseKind } from '../helpers/database.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

describe('the change signal of one instance', () => {
  it('tells a subscriber every committed change in log order, before the write is answered', async () => {
    const heard: ChangeNotice[] = [];
    const stop = t.app.changes.subscribe((notice) => heard.push(notice));
    try {
      const response = await asAdmin(t).send('POST', '/rest/api/capabilities', { title: unique('heard') });
      const capability = expectStatus(response, 201);
      const [admin] = await t.db.query<{ id: string }>(`SELECT id FROM users WHERE username = 'admin'`);
      // The writer too: read-your-writes routes its reads by it (src/db/replication.ts).
      expect(heard).toEqual([
        {
          seq: t.app.changes.position,
          resource: 'capability',
          identifier: capability.identifier,
          operation: 'create',
          userId: admin?.id,
          actingProviderId: null,
        },
      ]);
      const participant = await addParticipant(t.app, t.users.serviceProvider);
      expect(heard.at(-1)).toMatchObject({
        resource: 'participant',
        identifier: participant.qualifiedIdentifier,
        operation: 'create',
      });
      expect(heard.map((notice) => notice.seq)).toEqual([heard[0]?.seq, (heard[0]?.seq ?? 0) + 1]);
    } finally {
      stop();
    }
  });

  it('tells nothing for a write that failed', async () => {
    const heard: ChangeNotice[] = [];
    const stop = t.app.changes.subscribe((notice) => heard.push(notice));
    expectStatus(await asAdmin(t).send('POST', '/rest/api/capabilities', { title: '' }), 400);
    await t.app.changes.catchUp();
    stop();
    expect(heard).toEqual([]);
  });
});

describe('the change signal when a writer dies between its commit and the numbering of its entries', () => {
  it('numbers them on its poll and tells them', async () => {
    const signal = changeSignal(t.db, { pollMs: 50 });
    const heard: ChangeNotice[] = [];
    signal.subscribe((notice) => heard.push(notice));
    await signal.start();
    try {
      const identifier = unique('orphan');
      // Outside a transaction no after-commit numbering runs: the entry is committed but has no position.
      await appendChange(t.db, SYSTEM_ACTOR, {
        resource: 'capability',
        identifier,
        operation: 'create',
        before: null,
        after: null,
      });
      await vi.waitFor(() => expect(heard.map((notice) => notice.identifier)).toContain(identifier), {
        timeout: 5_000,
        interval: 20,
      });
      const [entry] = await t.db.query<{ seq: number | null }>('SELECT seq FROM change_log WHERE identifier = $1', [
        identifier,
      ]);
      expect(entry?.seq).toBe(heard.find((notice) => notice.identifier === identifier)?.seq);
    } finally {
      await signal.stop();
    }
  });
});

describe.runIf(testDatabaseKind === 'postgres')('two instances on one PostgreSQL schema', () => {
  let instance: Awaited<ReturnType<typeof startOtherInstance>>;
  let schema = '';
  let other: App;
  beforeAll(async () => {
    schema = await schemaOf(t.db);
    instance = await startOtherInstance(t);
    other = instance.app;
  });
  afterAll(async () => instance?.close());

  const adminGet = (app: App, authorization: string) =>
    app.inject({ method: 'GET', url: '/rest/api/users', headers: { authorization } });

  it('a password changed through one instance is refused by the other, whose credential cache heard it', async () => {
    const api = asAdmin(t);
    const username = unique('admin');
    const old = 'first-long-password-1';
    const user = expectStatus(
      await api.send('POST', '/rest/api/users', { username, password: old, role: 'ADMIN' }),
      201,
    );
    const oldAuthorization = `Basic ${Buffer.from(`${username}:${old}`).toString('base64')}`;
    // The other instance verifies the password once and keeps it in its cache.
    expect((await adminGet(other, oldAuthorization)).statusCode).toBe(200);
    expect((await adminGet(other, oldAuthorization)).statusCode).toBe(200);

    const heard: ChangeNotice[] = [];
    const stop = other.changes.subscribe((notice) => heard.push(notice));
    expectStatus(
      await api.send('PUT', `/rest/api/users/${user.identifier}`, {
        username,
        password: 'second-long-password-2',
        role: 'ADMIN',
      }),
      200,
    );
    // NOTIFY carries the signal (the safety poll is 10 s away): the other instance hears it soon.
    await vi.waitFor(
      () =>
        expect(heard).toContainEqual(
          expect.objectContaining({ resource: 'user', identifier: user.identifier, operation: 'update' }),
        ),
      { timeout: 5000 },
    );
    stop();
    expect((await adminGet(other, oldAuthorization)).statusCode).toBe(401);
  });

  it('an instance whose listening connection was cut catches up from the log', async () => {
    const heard: ChangeNotice[] = [];
    const stop = other.changes.subscribe((notice) => heard.push(notice));
    const listeners = `SELECT pid FROM pg_stat_activity WHERE application_name = $1`;
    const name = listenerName(schema);
    const cut = await t.db.query<{ pid: number }>(`SELECT pid, pg_terminate_backend(pid) FROM (${listeners}) l`, [
      name,
    ]);
    expect(cut.length).toBe(2);
    const capability = expectStatus(
      await asAdmin(t).send('POST', '/rest/api/capabilities', { title: unique('missed') }),
      201,
    );
    await vi.waitFor(
      () => expect(heard).toContainEqual(expect.objectContaining({ identifier: capability.identifier })),
      { timeout: 8000 },
    );
    stop();
    // Each instance reconnects on its own schedule: the one that heard may be back before the other.
    const again = await vi.waitFor(
      async () => {
        const rows = await t.db.query<{ pid: number }>(listeners, [name]);
        expect(rows).toHaveLength(2);
        return rows;
      },
      { timeout: 8000, interval: 100 },
    );
    expect(again.some((row) => cut.some((old) => old.pid === row.pid))).toBe(false);
  });
});

describe('the change signal after a failover that lost the last entries it told', () => {
  it("tells a reset when another entry holds a position it told, then goes on from the new log's end", async () => {
    const signal = changeSignal(t.db, { pollMs: 60_000 });
    const heard: string[] = [];
    let resets = 0;
    signal.subscribe((notice) => heard.push(notice.identifier));
    signal.onReset(() => (resets += 1));
    await signal.start();
    const append = (identifier: string) =>
      t.db.transaction((tx) =>
        appendChange(tx, SYSTEM_ACTOR, {
          resource: 'capability',
          identifier,
          operation: 'create',
          before: null,
          after: null,
        }),
      );
    try {
      const lost = unique('lost');
      await append(lost);
      await signal.catchUp();
      expect(heard).toEqual([lost]);
      // The promoted standby had not received that entry: its log ends before it, and its next change takes its position.
      await t.db.transaction(async (tx) => {
        await tx.query('DELETE FROM change_log WHERE identifier = $1', [lost]);
        await tx.query('UPDATE change_log_position SET seq = seq - 1');
      });
      const taken = unique('taken');
      await append(taken);
      await signal.catchUp();
      expect(resets).toBe(1);
      // A writer numbers its entry just after its commit, whose notification may be read in between: the log then
      // ends before the position told (a reset there), and the new entry comes after the reset, told as a change.
      // Read after the numbering, the entry at the position told is another one (a reset after it).
      const toldAfterReset = heard.slice(1);
      expect([[], [taken]], 'what the reset covers is not told as a change').toContainEqual(toldAfterReset);
      const after = unique('after');
      await append(after);
      await signal.catchUp();
      expect(heard).toEqual([lost, ...toldAfterReset, after]);
      expect(resets).toBe(1);
    } finally {
      await signal.stop();
    }
  });
});
