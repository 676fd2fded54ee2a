import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { appendChange, SYSTEM_ACTOR, type ChangeNotice } from '../../src/db/change-log.js';
import { Role } from '../../src/http/auth.js';
import { insertUser } from '../../src/users/repository.js';
import { basic, startOtherInstance, startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { expectStatus } from '../helpers/administration.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { testDatabaseKind } from '../helpers/database.js';
import { checkResponsesAgainstDescription } from '../helpers/openapi-responses.js';
import { unique } from '../helpers/requests.js';
import { feedEnd } from '../helpers/feed.js';

/**
 * The sign-in lock holds for its window whatever else arrives; it is kept in the database, so every instance refuses
 * the pair and the authority reads one list; an ADMIN lifts it (on every instance); every user changes its own password.
 */

const MAX_FAILURES = 5;
/** SIGN_IN_MAX_LOCKS_PER_ADDRESS's default: the locks of other usernames one address holds before it is locked as a whole. */
const DEFAULT_LOCKS_PER_ADDRESS = 3;
/** Far longer than a test takes, however slow the machine: a Retry-After well under it means the lock was shortened. */
const LOCK_MS = 600_000;
const LOCKS = '/rest/api/sign-in-locks';
const OWN_PASSWORD = '/rest/api/users/me/password';

let t: TestApp;
/** An instance whose throttle remembers few counts, so that a flood overflows them quickly. */
let app: App;
beforeAll(async () => {
  t = await startTestApp();
  app = await buildApp({
    db: t.db,
    signInThrottle: { maxFailures: MAX_FAILURES, lockMs: LOCK_MS, freeFailures: 100, maxEntries: 20 },
  });
  checkResponsesAgainstDescription(app);
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

const PASSWORD = 'a-long-enough-password';

/** A new user of `role`, with its credentials. */
async function newUser(role: Role = Role.registryAuthority): Promise<TestUser & { identifier: string }> {
  const username = unique('locked');
  const provider =
    role === Role.serviceProvider
      ? { serviceProviderId: t.fixture.serviceProviderId }
      : role === Role.accessPointProvider
        ? { accessPointProviderId: t.fixture.accessPointProviderId }
        : {};
  const identifier = await insertUser(t.db, { username, password: PASSWORD, role, ...provider });
  return { identifier, username, password: PASSWORD, authorization: basic(username, PASSWORD) };
}

const signIn = (on: App, authorization: string, remoteAddress: string) =>
  on.inject({ url: '/rest/api/accessPoints', headers: { authorization }, remoteAddress });

/** Locks `user` at `address` on `on`: MAX_FAILURES wrong passwords. */
async function lock(on: App, user: TestUser, address: string) {
  for (let i = 0; i < MAX_FAILURES; i += 1)
    expectErrorBody(await signIn(on, basic(user.username, `wrong-${i}-password`), address), 401);
  expectErrorBody(await signIn(on, user.authorization, address), 429);
}

const locksOf = async (on: App, username: string, reader: TestUser = t.users.authority) =>
  expectStatus(
    await on.inject({ url: `${LOCKS}?username=${username}`, headers: { authorization: reader.authorization } }),
    200,
  ).content as Array<{
    identifier: string;
    username: string;
    clientAddress: string;
    lockedAt: string;
    lockedUntil: string;
  }>;

describe('a sign-in lock', () => {
  it("holds while the same address floods sign-ins of other usernames (the issue's reproduction)", async () => {
    const owner = await newUser();
    const attacker = '203.0.113.77';
    await lock(app, owner, attacker);
    // Far more than the counts kept: most are refused at once by the turns (4 at a time per address), the rest are checked.
    for (let wave = 0; wave < 10; wave += 1) {
      const answers = await Promise.all(
        Array.from({ length: 40 }, () => signIn(app, basic(`flood-${randomUUID()}`, 'a-wrong-password'), attacker)),
      );
      expect(answers.every((answer) => answer.statusCode === 401 || answer.statusCode === 429)).toBe(true);
    }
    const still = await signIn(app, owner.authorization, attacker);
    expectErrorBody(still, 429, 'Too many failed attempts; try again later');
    expect(Number(still.headers['retry-after'])).toBeGreaterThan(LOCK_MS / 1000 - 120);
    // The owner elsewhere was never locked.
    expect((await signIn(app, owner.authorization, '198.51.100.77')).statusCode).toBe(200);
  }, 120_000);

  it('is listed for the ADMIN and the authority with its username, address and end; others may not read it', async () => {
    const owner = await newUser();
    const before = Date.now();
    await lock(app, owner, '203.0.113.78');
    await vi.waitFor(async () => expect(await locksOf(app, owner.username)).toHaveLength(1), {
      timeout: 5000,
      interval: 50,
    });
    const [listed] = await locksOf(app, owner.username.toUpperCase(), t.users.admin);
    expect(listed).toEqual({
      identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
      username: owner.username,
      clientAddress: '203.0.113.78',
      lockedAt: expect.any(String),
      lockedUntil: expect.any(String),
    });
    expect(Date.parse(listed?.lockedUntil as string) - before).toBeGreaterThan(LOCK_MS - 5_000);
    for (const user of [t.users.serviceProvider, t.users.accessPointProvider]) {
      expectErrorBody(await app.inject({ url: LOCKS, headers: { authorization: user.authorization } }), 403);
    }
    expectErrorBody(await app.inject({ url: LOCKS }), 401);
  });

  it('is lifted by the ADMIN alone: the owner signs in from that address at once, and the audit keeps the lift alone', async () => {
    const owner = await newUser();
    await lock(app, owner, '203.0.113.79');
    const [listed] = await vi.waitFor(
      async () => {
        const found = await locksOf(app, owner.username);
        expect(found).toHaveLength(1);
        return found;
      },
      { timeout: 5000, interval: 50 },
    );
    const url = `${LOCKS}/${listed?.identifier}`;
    expectErrorBody(
      await app.inject({ method: 'DELETE', url, headers: { authorization: t.users.authority.authorization } }),
      403,
    );
    expectStatus(
      await app.inject({ method: 'DELETE', url, headers: { authorization: t.users.admin.authorization } }),
      204,
    );
    expect((await signIn(app, owner.authorization, '203.0.113.79')).statusCode).toBe(200);
    expect(await locksOf(app, owner.username)).toEqual([]);
    expectErrorBody(
      await app.inject({ method: 'DELETE', url, headers: { authorization: t.users.admin.authorization } }),
      404,
      `Unable to find instance with identifier '${listed?.identifier}'.`,
    );
    // A lock is state, not history: the audit keeps the ADMIN's lift alone, with the lock it lifted and who lifted it.
    const audit = expectStatus(
      await app.inject({
        url: `/rest/api/audit?resource=sign-in-lock&identifier=${listed?.identifier}&sort=seq`,
        headers: { authorization: t.users.admin.authorization },
      }),
      200,
    );
    expect(audit.content).toEqual([
      expect.objectContaining({
        operation: 'delete',
        user: expect.objectContaining({ username: t.users.admin.username }),
        before: expect.objectContaining({ username: owner.username, clientAddress: '203.0.113.79' }),
        after: null,
      }),
    ]);
    // The lift gave the pair a fresh count: one wrong password does not lock it again.
    expectErrorBody(await signIn(app, basic(owner.username, 'wrong-again-password'), '203.0.113.79'), 401);
    expect((await signIn(app, owner.authorization, '203.0.113.79')).statusCode).toBe(200);
  });

  it.runIf(testDatabaseKind === 'postgres')(
    'made on one instance is refused and listed on another, and lifted there for both',
    async () => {
      const other = await startOtherInstance(t);
      const heard: ChangeNotice[] = [];
      const stop = other.app.changes.subscribe((notice) => heard.push(notice));
      try {
        const owner = await newUser();
        const address = '203.0.113.80';
        await lock(app, owner, address);
        await vi.waitFor(async () => expectErrorBody(await signIn(other.app, owner.authorization, address), 429), {
          timeout: 5000,
          interval: 50,
        });
        // The lock came by the table and its own notification: no change was logged, none woke the other's feed polls.
        expect(heard.filter((notice) => notice.resource === 'sign-in-lock')).toEqual([]);
        const [listed] = await locksOf(other.app, owner.username);
        expectStatus(
          await other.app.inject({
            method: 'DELETE',
            url: `${LOCKS}/${listed?.identifier}`,
            headers: { authorization: t.users.admin.authorization },
          }),
          204,
        );
        expect((await signIn(other.app, owner.authorization, address)).statusCode).toBe(200);
        await vi.waitFor(async () => expect((await signIn(app, owner.authorization, address)).statusCode).toBe(200), {
          timeout: 5000,
          interval: 50,
        });
      } finally {
        stop();
        await other.close();
      }
    },
  );

  it('is read again by an instance that starts while it holds', async () => {
    const owner = await newUser();
    await lock(app, owner, '203.0.113.81');
    await vi.waitFor(async () => expect(await locksOf(app, owner.username)).toHaveLength(1), {
      timeout: 5000,
      interval: 50,
    });
    const restarted = await buildApp({ db: t.db });
    await restarted.ready();
    try {
      expectErrorBody(await signIn(restarted, owner.authorization, '203.0.113.81'), 429);
    } finally {
      await restarted.close();
    }
  });
});

describe('an address guessing many usernames', () => {
  /** Each wrong password locks its pair at once, as the review's 120 wrong passwords with 120 new usernames did. */
  let quick: App;
  beforeAll(async () => {
    quick = await buildApp({ db: t.db, signInThrottle: { maxFailures: 1, lockMs: LOCK_MS, freeFailures: 1000 } });
    checkResponsesAgainstDescription(quick);
    await quick.ready();
  });
  afterAll(() => quick?.close());

  const admin = () => ({ authorization: t.users.admin.authorization });
  const locksFrom = async (on: App, address: string) =>
    (
      expectStatus(await on.inject({ url: `${LOCKS}?size=2000`, headers: admin() }), 200).content as Array<{
        identifier: string;
        username: string | null;
        clientAddress: string;
      }>
    ).filter((held) => held.clientAddress === address);

  it('makes the registry keep a few locks of it and none in the change log; then the address is refused as a whole', async () => {
    const owner = await newUser();
    const guesser = '203.0.113.120';
    const { cursor } = await feedEnd(t.db);
    const guessed = unique('guessed');
    for (let i = 0; i < 120; i += 1) {
      expect([401, 429]).toContain(
        (await signIn(quick, basic(`${guessed}-${i}`, 'a-wrong-password'), guesser)).statusCode,
      );
    }
    const refused = await vi.waitFor(
      async () => {
        const answer = await signIn(quick, owner.authorization, guesser);
        expectErrorBody(answer, 429, 'Too many failed attempts; try again later');
        return answer;
      },
      { timeout: 5000, interval: 50 },
    );
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(LOCK_MS / 1000 - 120);
    expect((await signIn(quick, owner.authorization, '198.51.100.120')).statusCode).toBe(200);

    const held = await locksFrom(quick, guesser);
    expect(held.length).toBeLessThanOrEqual(DEFAULT_LOCKS_PER_ADDRESS + 1);
    expect(held.filter((each) => each.username === null)).toHaveLength(1);
    const feed = expectStatus(
      await quick.inject({ url: `/rest/api/changes?after=${cursor}&limit=1000`, headers: admin() }),
      200,
    );
    expect(feed.entries.filter((entry: { resource: string }) => entry.resource === 'sign-in-lock')).toEqual([]);
    expect(JSON.stringify(feed)).not.toContain(guessed);

    // The ADMIN lifts the address's lock: its owner signs in from there again.
    const whole = held.find((each) => each.username === null);
    expectStatus(await quick.inject({ method: 'DELETE', url: `${LOCKS}/${whole?.identifier}`, headers: admin() }), 204);
    expect((await signIn(quick, owner.authorization, guesser)).statusCode).toBe(200);
  }, 120_000);

  it.runIf(testDatabaseKind === 'postgres')('locks the address as a whole on another instance too', async () => {
    const other = await startOtherInstance(t);
    try {
      const owner = await newUser();
      const guesser = '203.0.113.123';
      for (let i = 0; i <= DEFAULT_LOCKS_PER_ADDRESS; i += 1)
        expectErrorBody(await signIn(quick, basic(unique('guessed'), 'a-wrong-password'), guesser), 401);
      await vi.waitFor(async () => expectErrorBody(await signIn(other.app, owner.authorization, guesser), 429), {
        timeout: 5000,
        interval: 50,
      });
      expect((await signIn(other.app, owner.authorization, '198.51.100.123')).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('keeps no ended lock: its username and address are dropped from the database soon after it ends', async () => {
    const brief = await buildApp({ db: t.db, signInThrottle: { maxFailures: 1, lockMs: 300, lockPollMs: 100 } });
    await brief.ready();
    try {
      const owner = await newUser();
      expectErrorBody(await signIn(brief, basic(owner.username, 'a-wrong-password'), '203.0.113.121'), 401);
      const rows = () => t.db.query('SELECT 1 FROM sign_in_locks WHERE username = $1', [owner.username]);
      await vi.waitFor(async () => expect(await rows()).toHaveLength(1), { timeout: 5000, interval: 20 });
      await vi.waitFor(async () => expect(await rows()).toEqual([]), { timeout: 5000, interval: 50 });
      expect((await signIn(brief, owner.authorization, '203.0.113.121')).statusCode).toBe(200);
    } finally {
      await brief.close();
    }
  });

  it('leaves no guessed username or address in the change log entries of locks made before they were kept apart', async () => {
    const guessed = unique('old-guess');
    const identifier = randomUUID();
    await t.db.transaction((tx) =>
      appendChange(tx, SYSTEM_ACTOR, {
        resource: 'sign-in-lock',
        identifier,
        operation: 'create',
        before: null,
        after: {
          identifier,
          username: guessed,
          clientAddress: '203.0.113.122',
          lockedAt: '2026-01-01T00:00:00.000Z',
          lockedUntil: '2026-01-01T00:05:00.000Z',
        },
      }),
    );
    await t.db.runScript(
      await readFile(new URL('../../src/db/migrations/072_sign_in_locks_apart.sql', import.meta.url), 'utf8'),
    );
    const audit = expectStatus(
      await app.inject({ url: `/rest/api/audit?resource=sign-in-lock&identifier=${identifier}`, headers: admin() }),
      200,
    );
    expect(audit.content).toEqual([
      expect.objectContaining({
        operation: 'create',
        after: { identifier, lockedAt: '2026-01-01T00:00:00.000Z', lockedUntil: '2026-01-01T00:05:00.000Z' },
      }),
    ]);
    expect(JSON.stringify(audit)).not.toMatch(new RegExp(`${guessed}|203\\.0\\.113\\.122`));
  });
});

describe("a user's own password", () => {
  const change = (on: App, user: TestUser, payload: unknown, remoteAddress = '127.0.0.1') =>
    on.inject({
      method: 'PUT',
      url: OWN_PASSWORD,
      headers: { authorization: user.authorization },
      payload: payload as Record<string, unknown>,
      remoteAddress,
    });

  it.each([Role.serviceProvider, Role.accessPointProvider, Role.registryAuthority, Role.admin])(
    'is changed by a %s with the current one; the old one stops at once',
    async (role) => {
      const user = await newUser(role);
      if (role !== Role.admin) {
        expectErrorBody(
          await t.app.inject({
            method: 'PUT',
            url: `/rest/api/users/${user.identifier}`,
            headers: { authorization: user.authorization },
            payload: { username: user.username, role, password: 'another-long-password' },
          }),
          403,
        );
      }
      const newPassword = `new-${randomUUID()}`;
      expect((await change(app, user, { currentPassword: PASSWORD, newPassword })).statusCode).toBe(200);
      expectErrorBody(await signIn(app, user.authorization, '127.0.0.1'), 401);
      // The other instance drops what it kept once it has heard the change (its change signal, milliseconds after the
      // commit); the instance that made it heard it before answering.
      await t.app.changes.catchUp();
      expectErrorBody(await signIn(t.app, user.authorization, '127.0.0.1'), 401);
      expect((await signIn(app, basic(user.username, newPassword), '127.0.0.1')).statusCode).toBe(200);
    },
  );

  it('refuses a wrong current password, a weak or unchanged new one, naming the field; nothing changes', async () => {
    const user = await newUser();
    const wrong = expectErrorBody(
      await change(app, user, { currentPassword: 'not-the-password', newPassword: 'password1234' }),
      400,
      "Validation failed for object='passwordChangeFormDTO'. Error count: 2",
    );
    expectFieldError(
      wrong,
      'passwordChangeFormDTO',
      'currentPassword',
      'WrongPassword',
      'is not your current password',
    );
    expectFieldError(
      wrong,
      'passwordChangeFormDTO',
      'newPassword',
      'WeakPassword',
      'is one of the commonest passwords; choose another',
    );
    expect(JSON.stringify(wrong)).not.toContain('not-the-password');
    expect(JSON.stringify(wrong)).not.toContain('password1234');
    const same = expectErrorBody(await change(app, user, { currentPassword: PASSWORD, newPassword: PASSWORD }), 400);
    expectFieldError(
      same,
      'passwordChangeFormDTO',
      'newPassword',
      'WeakPassword',
      'must differ from the current password',
    );
    expectFieldError(
      expectErrorBody(await change(app, user, { currentPassword: PASSWORD, newPassword: 'x'.repeat(1025) }), 400),
      'passwordChangeFormDTO',
      'newPassword',
      'Size',
    );
    expect((await signIn(app, user.authorization, '127.0.0.1')).statusCode).toBe(200);
    expectErrorBody(
      await app.inject({
        method: 'PUT',
        url: OWN_PASSWORD,
        payload: { currentPassword: PASSWORD, newPassword: 'another-long-password' },
      }),
      401,
    );
  });

  it('is throttled as a sign-in: wrong current passwords lock the user at that address', async () => {
    const user = await newUser();
    const address = '203.0.113.90';
    for (let i = 0; i < MAX_FAILURES; i += 1) {
      // The tab's right password, checked again each time (as after any user's change): it does not end the guesses' count.
      app.credentials.forgetAll();
      expectErrorBody(
        await change(
          app,
          user,
          { currentPassword: `guess-${i}-password`, newPassword: 'a-brand-new-password' },
          address,
        ),
        400,
      );
    }
    expectErrorBody(
      await change(app, user, { currentPassword: PASSWORD, newPassword: 'a-brand-new-password' }, address),
      429,
    );
    expect((await signIn(app, user.authorization, '198.51.100.90')).statusCode).toBe(200);
  });
});
