import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../src/app.js';
import { Role } from '../src/http/auth.js';
import { insertUser } from '../src/users/repository.js';
import { basic, startOtherInstance, startTestApp, type TestApp, type TestUser } from './helpers/app.js';
import { expectStatus } from './helpers/administration.js';
import { expectErrorBody, expectFieldError } from './helpers/assertions.js';
import { testDatabaseKind } from './helpers/database.js';
import { checkResponsesAgainstDescription } from './helpers/openapi-responses.js';
import { unique } from './helpers/requests.js';

/**
 * The sign-in lock holds for its window whatever else arrives; it is kept in the database, so every instance refuses
 * the pair and the authority reads one list; an ADMIN lifts it (on every instance); every user changes its own password.
 */

const MAX_FAILURES = 5;
/** Far longer than a test takes, however slow the machine: a Retry-After well under it means the lock was shortened. */
const LOCK_MS = 600_000;
const LOCKS = '/rest/api/sign-in-locks';
const OWN_PASSWORD = '/rest/api/users/me/password';

let t: TestApp;
/** An instance whose throttle remembers few counts, so that a flood overflows them quickly. */
let app: App;
beforeAll(async () => {
  t = await startTestApp();
  app = await buildApp({ db: t.db, loginThrottle: { maxFailures: MAX_FAILURES, lockMs: LOCK_MS, freeFailures: 100, maxEntries: 20 } });
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
  const provider = role === Role.serviceProvider ? { serviceProviderId: t.fixture.serviceProviderId }
    : role === Role.accessPointProvider ? { accessPointProviderId: t.fixture.accessPointProviderId } : {};
  const identifier = await insertUser(t.db, { username, password: PASSWORD, role, ...provider });
  return { identifier, username, password: PASSWORD, authorization: basic(username, PASSWORD) };
}

const signIn = (on: App, authorization: string, remoteAddress: string) =>
  on.inject({ url: '/rest/api/accessPoints', headers: { authorization }, remoteAddress });

/** Locks `user` at `address` on `on`: MAX_FAILURES wrong passwords. */
async function lock(on: App, user: TestUser, address: string) {
  for (let i = 0; i < MAX_FAILURES; i += 1) expectErrorBody(await signIn(on, basic(user.username, `wrong-${i}-password`), address), 401);
  expectErrorBody(await signIn(on, user.authorization, address), 429);
}

const locksOf = async (on: App, username: string, reader: TestUser = t.users.authority) =>
  expectStatus(await on.inject({ url: `${LOCKS}?username=${username}`, headers: { authorization: reader.authorization } }), 200)
    .content as Array<{ identifier: string; username: string; clientAddress: string; lockedAt: string; lockedUntil: string }>;

describe('a sign-in lock', () => {
  it('holds while the same address floods sign-ins of other usernames (the issue\'s reproduction)', async () => {
    const owner = await newUser();
    const attacker = '203.0.113.77';
    await lock(app, owner, attacker);
    // Far more than the counts kept: most are refused at once by the turns (4 at a time per address), the rest are checked.
    for (let wave = 0; wave < 10; wave += 1) {
      const answers = await Promise.all(Array.from({ length: 40 }, () => signIn(app, basic(`flood-${randomUUID()}`, 'a-wrong-password'), attacker)));
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
    await vi.waitFor(async () => expect(await locksOf(app, owner.username)).toHaveLength(1), { timeout: 5000, interval: 50 });
    const [listed] = await locksOf(app, owner.username.toUpperCase(), t.users.admin);
    expect(listed).toEqual({
      identifier: expect.stringMatching(/^[0-9a-f-]{36}$/), username: owner.username, clientAddress: '203.0.113.78',
      lockedAt: expect.any(String), lockedUntil: expect.any(String),
    });
    expect(Date.parse(listed?.lockedUntil as string) - before).toBeGreaterThan(LOCK_MS - 5_000);
    for (const user of [t.users.serviceProvider, t.users.accessPointProvider]) {
      expectErrorBody(await app.inject({ url: LOCKS, headers: { authorization: user.authorization } }), 403);
    }
    expectErrorBody(await app.inject({ url: LOCKS }), 401);
  });

  it('is lifted by the ADMIN alone: the owner signs in from that address at once, and the log has both', async () => {
    const owner = await newUser();
    await lock(app, owner, '203.0.113.79');
    const [listed] = await vi.waitFor(async () => {
      const found = await locksOf(app, owner.username);
      expect(found).toHaveLength(1);
      return found;
    }, { timeout: 5000, interval: 50 });
    const url = `${LOCKS}/${listed?.identifier}`;
    expectErrorBody(await app.inject({ method: 'DELETE', url, headers: { authorization: t.users.authority.authorization } }), 403);
    expectStatus(await app.inject({ method: 'DELETE', url, headers: { authorization: t.users.admin.authorization } }), 204);
    expect((await signIn(app, owner.authorization, '203.0.113.79')).statusCode).toBe(200);
    expect(await locksOf(app, owner.username)).toEqual([]);
    expectErrorBody(await app.inject({ method: 'DELETE', url, headers: { authorization: t.users.admin.authorization } }), 404,
      `Unable to find instance with identifier '${listed?.identifier}'.`);
    const audit = expectStatus(await app.inject({
      url: `/rest/api/audit?resource=sign-in-lock&identifier=${listed?.identifier}&sort=seq`, headers: { authorization: t.users.admin.authorization },
    }), 200);
    expect(audit.content.map((entry: { operation: string }) => entry.operation).sort()).toEqual(['create', 'delete']);
    // The lift gave the pair a fresh count: one wrong password does not lock it again.
    expectErrorBody(await signIn(app, basic(owner.username, 'wrong-again-password'), '203.0.113.79'), 401);
    expect((await signIn(app, owner.authorization, '203.0.113.79')).statusCode).toBe(200);
  });

  it.runIf(testDatabaseKind === 'postgres')('made on one instance is refused and listed on another, and lifted there for both', async () => {
    const other = await startOtherInstance(t);
    try {
      const owner = await newUser();
      const address = '203.0.113.80';
      await lock(app, owner, address);
      await vi.waitFor(async () => expectErrorBody(await signIn(other.app, owner.authorization, address), 429), { timeout: 5000, interval: 50 });
      const [listed] = await locksOf(other.app, owner.username);
      expectStatus(await other.app.inject({ method: 'DELETE', url: `${LOCKS}/${listed?.identifier}`, headers: { authorization: t.users.admin.authorization } }), 204);
      expect((await signIn(other.app, owner.authorization, address)).statusCode).toBe(200);
      await vi.waitFor(async () => expect((await signIn(app, owner.authorization, address)).statusCode).toBe(200), { timeout: 5000, interval: 50 });
    } finally {
      await other.close();
    }
  });

  it('is read again by an instance that starts while it holds', async () => {
    const owner = await newUser();
    await lock(app, owner, '203.0.113.81');
    await vi.waitFor(async () => expect(await locksOf(app, owner.username)).toHaveLength(1), { timeout: 5000, interval: 50 });
    const restarted = await buildApp({ db: t.db });
    await restarted.ready();
    try {
      expectErrorBody(await signIn(restarted, owner.authorization, '203.0.113.81'), 429);
    } finally {
      await restarted.close();
    }
  });
});

describe('a user\'s own password', () => {
  const change = (on: App, user: TestUser, payload: unknown, remoteAddress = '127.0.0.1') =>
    on.inject({ method: 'PUT', url: OWN_PASSWORD, headers: { authorization: user.authorization }, payload: payload as Record<string, unknown>, remoteAddress });

  it.each([Role.serviceProvider, Role.accessPointProvider, Role.registryAuthority, Role.admin])('is changed by a %s with the current one; the old one stops at once', async (role) => {
    const user = await newUser(role);
    if (role !== Role.admin) {
      expectErrorBody(await t.app.inject({ method: 'PUT', url: `/rest/api/users/${user.identifier}`, headers: { authorization: user.authorization },
        payload: { username: user.username, role, password: 'another-long-password' } }), 403);
    }
    const newPassword = `new-${randomUUID()}`;
    expect((await change(app, user, { currentPassword: PASSWORD, newPassword })).statusCode).toBe(200);
    expectErrorBody(await signIn(app, user.authorization, '127.0.0.1'), 401);
    expectErrorBody(await signIn(t.app, user.authorization, '127.0.0.1'), 401);
    expect((await signIn(app, basic(user.username, newPassword), '127.0.0.1')).statusCode).toBe(200);
  });

  it('refuses a wrong current password, a weak or unchanged new one, naming the field; nothing changes', async () => {
    const user = await newUser();
    const wrong = expectErrorBody(await change(app, user, { currentPassword: 'not-the-password', newPassword: 'password1234' }), 400,
      "Validation failed for object='passwordChangeFormDTO'. Error count: 2");
    expectFieldError(wrong, 'passwordChangeFormDTO', 'currentPassword', 'WrongPassword', 'is not your current password');
    expectFieldError(wrong, 'passwordChangeFormDTO', 'newPassword', 'WeakPassword', 'is one of the commonest passwords; choose another');
    expect(JSON.stringify(wrong)).not.toContain('not-the-password');
    expect(JSON.stringify(wrong)).not.toContain('password1234');
    const same = expectErrorBody(await change(app, user, { currentPassword: PASSWORD, newPassword: PASSWORD }), 400);
    expectFieldError(same, 'passwordChangeFormDTO', 'newPassword', 'WeakPassword', 'must differ from the current password');
    expectFieldError(expectErrorBody(await change(app, user, { currentPassword: PASSWORD, newPassword: 'x'.repeat(1025) }), 400),
      'passwordChangeFormDTO', 'newPassword', 'Size');
    expect((await signIn(app, user.authorization, '127.0.0.1')).statusCode).toBe(200);
    expectErrorBody(await app.inject({ method: 'PUT', url: OWN_PASSWORD, payload: { currentPassword: PASSWORD, newPassword: 'another-long-password' } }), 401);
  });

  it('is throttled as a sign-in: wrong current passwords lock the user at that address', async () => {
    const user = await newUser();
    const address = '203.0.113.90';
    for (let i = 0; i < MAX_FAILURES; i += 1) {
      // The tab's right password, checked again each time (as after any user's change): it does not end the guesses' count.
      app.credentials.forgetAll();
      expectErrorBody(await change(app, user, { currentPassword: `guess-${i}-password`, newPassword: 'a-brand-new-password' }, address), 400);
    }
    expectErrorBody(await change(app, user, { currentPassword: PASSWORD, newPassword: 'a-brand-new-password' }, address), 429);
    expect((await signIn(app, user.authorization, '198.51.100.90')).statusCode).toBe(200);
  });
});
