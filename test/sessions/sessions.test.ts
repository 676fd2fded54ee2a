import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { SESSIONS_PER_USER } from '../../src/sessions/sessions.js';
import { basic, startOtherInstance, useTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { expectErrorBody, expectSecurityHeaders } from '../helpers/assertions.js';
import { testDatabaseKind } from '../helpers/database.js';
import { call } from '../helpers/requests.js';

const t = useTestApp();
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function open(user: TestUser): Promise<{ token: string; username: string; role: string; expiresAt: string }> {
  const response = await call(t.app, { method: 'POST', url: '/rest/api/sessions', user });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

const usersWith = (token: string) => call(t.app, { url: '/rest/api/users?size=1', headers: bearer(token) });

const FIRST_PASSWORD = 'a-first-long-password';

/** A REGISTRY_AUTHORITY added by the ADMIN through the API, with FIRST_PASSWORD: its identifier and credentials. */
async function addAuthority(username: string): Promise<{ identifier: string; user: TestUser }> {
  const created = await call(t.app, {
    method: 'POST',
    url: '/rest/api/users',
    user: t.users.admin,
    payload: { username, password: FIRST_PASSWORD, role: 'REGISTRY_AUTHORITY' },
  });
  expect(created.statusCode, created.body).toBe(201);
  return {
    identifier: created.json().identifier,
    user: { username, password: FIRST_PASSWORD, authorization: basic(username, FIRST_PASSWORD) },
  };
}

interface Opening {
  /** The tokens of every session opened with the password the user had when the clients began. */
  tokens: string[];
  /** The statuses the session openings were answered. */
  statuses: Set<number>;
}

/**
 * Clients opening sessions with `user`'s credentials in a loop (as a holder of a stolen password would) while `change`
 * runs; they stop once it has answered, and what they got is returned beside its answer.
 */
async function openingWhile(
  app: TestApp['app'],
  user: TestUser,
  change: () => Promise<LightMyRequestResponse>,
): Promise<Opening & { changed: LightMyRequestResponse }> {
  const opening: Opening = { tokens: [], statuses: new Set() };
  let going = true;
  const client = async () => {
    while (going) {
      const response = await app.inject({
        method: 'POST',
        url: '/rest/api/sessions',
        headers: { authorization: user.authorization },
      });
      opening.statuses.add(response.statusCode);
      if (response.statusCode === 201) opening.tokens.push(response.json().token);
      // Over a socket a client waits for the network: here it lets the event loop go round (the embedded database answers in microtasks).
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const clients = Array.from({ length: 4 }, client);
  // Sessions are being opened (the credentials cached) before the change begins.
  while (opening.tokens.length < 4) await new Promise((resolve) => setTimeout(resolve, 5));
  const changed = await change();
  going = false;
  await Promise.all(clients);
  return { ...opening, changed };
}

async function liveAmong(tokens: string[]): Promise<number> {
  let live = 0;
  for (const token of tokens)
    if ((await call(t.app, { url: '/rest/api/participants?size=1', headers: bearer(token) })).statusCode === 200)
      live += 1;
  return live;
}

describe('console sessions: a sign-in that outlives a reload without the password kept in the browser', () => {
  it('opens with Basic credentials and answers a token that then acts as the user, with its role', async () => {
    const before = Date.now();
    const response = await call(t.app, { method: 'POST', url: '/rest/api/sessions', user: t.users.admin });
    expect(response.statusCode, response.body).toBe(201);
    expectSecurityHeaders(response);
    const opened = response.json();
    expect(opened).toMatchObject({
      username: 'admin',
      role: 'ADMIN',
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    // At most 8 hours, whatever happens meanwhile.
    expect(Date.parse(opened.expiresAt) - before).toBeGreaterThan(8 * 3600_000 - 60_000);
    expect(Date.parse(opened.expiresAt) - before).toBeLessThanOrEqual(8 * 3600_000 + 60_000);
    expect((await usersWith(opened.token)).statusCode).toBe(200);
    const current = await call(t.app, { url: '/rest/api/sessions/current', headers: bearer(opened.token) });
    expect(current.json()).toEqual({ username: 'admin', role: 'ADMIN', expiresAt: opened.expiresAt });
    // Only the token's SHA-256 is stored.
    const stored = await t.db.query<{ token_hash: string }>('SELECT token_hash FROM console_sessions');
    expect(stored.map((row) => row.token_hash)).toContain(
      createHash('sha256').update(opened.token).digest('base64url'),
    );
    expect(JSON.stringify(stored)).not.toContain(opened.token);
  });

  it("keeps the role checks: a provider's session is refused what the provider is refused", async () => {
    const { token, role } = await open(t.users.serviceProvider);
    expect(role).toBe('SERVICE_PROVIDER');
    expectErrorBody(await usersWith(token), 403);
    expect((await call(t.app, { url: '/rest/api/participants?size=1', headers: bearer(token) })).statusCode).toBe(200);
  });

  it('opens nothing for wrong credentials, and a session cannot open the next', async () => {
    const count = async () =>
      (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM console_sessions'))[0]?.n;
    const before = await count();
    expectErrorBody(
      await call(t.app, {
        method: 'POST',
        url: '/rest/api/sessions',
        headers: { authorization: basic('admin', 'a-wrong-password') },
      }),
      401,
    );
    expectErrorBody(await call(t.app, { method: 'POST', url: '/rest/api/sessions' }), 401);
    const { token } = await open(t.users.authority);
    expectErrorBody(
      await call(t.app, { method: 'POST', url: '/rest/api/sessions', headers: bearer(token) }),
      403,
      'A session is opened with the username and password',
    );
    expect(await count()).toBe((before ?? 0) + 1);
  });

  it('ends at sign-out, after 30 minutes unused, 8 hours after it began, at a new password, and with its user', async () => {
    const signedOut = await open(t.users.admin);
    expect(
      (await call(t.app, { method: 'DELETE', url: '/rest/api/sessions/current', headers: bearer(signedOut.token) }))
        .statusCode,
    ).toBe(204);
    expectErrorBody(await usersWith(signedOut.token), 401, 'The session has ended: sign in again');

    const idle = await open(t.users.admin);
    await t.db.query("UPDATE console_sessions SET last_used_at = now() - interval '31 minutes' WHERE token_hash = $1", [
      createHash('sha256').update(idle.token).digest('base64url'),
    ]);
    expectErrorBody(await usersWith(idle.token), 401);

    const old = await open(t.users.admin);
    await t.db.query("UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1", [
      createHash('sha256').update(old.token).digest('base64url'),
    ]);
    expectErrorBody(await usersWith(old.token), 401);

    const { identifier, user } = await addAuthority('session-user');
    const beforeChange = await open(user);
    const renamed = await call(t.app, {
      method: 'PUT',
      url: `/rest/api/users/${identifier}`,
      user: t.users.admin,
      payload: { username: 'session-user', role: 'REGISTRY_AUTHORITY' },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    // A change without a new password leaves the session; a new password ends it.
    expect(
      (await call(t.app, { url: '/rest/api/participants?size=1', headers: bearer(beforeChange.token) })).statusCode,
    ).toBe(200);
    const changed = await call(t.app, {
      method: 'PUT',
      url: `/rest/api/users/${identifier}`,
      user: t.users.admin,
      payload: { username: 'session-user', role: 'REGISTRY_AUTHORITY', password: 'a-second-long-password' },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expectErrorBody(
      await call(t.app, { url: '/rest/api/participants?size=1', headers: bearer(beforeChange.token) }),
      401,
    );

    const second = await open({
      ...user,
      password: 'a-second-long-password',
      authorization: basic('session-user', 'a-second-long-password'),
    });
    expect(
      (await call(t.app, { method: 'DELETE', url: `/rest/api/users/${identifier}`, user: t.users.admin })).statusCode,
    ).toBe(204);
    expectErrorBody(await call(t.app, { url: '/rest/api/participants?size=1', headers: bearer(second.token) }), 401);
  });

  it('a user changing its own password in a session keeps that session; its other sessions, and Basic with the old password, end', async () => {
    const { user } = await addAuthority('own-change-user');
    const here = await open(user);
    const elsewhere = await open(user);
    const changed = await call(t.app, {
      method: 'PUT',
      url: '/rest/api/users/me/password',
      headers: bearer(here.token),
      payload: { currentPassword: FIRST_PASSWORD, newPassword: 'a-second-long-password' },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect((await call(t.app, { url: '/rest/api/participants?size=1', headers: bearer(here.token) })).statusCode).toBe(
      200,
    );
    expectErrorBody(await call(t.app, { url: '/rest/api/participants?size=1', headers: bearer(elsewhere.token) }), 401);
    expectErrorBody(await call(t.app, { url: '/rest/api/participants?size=1', user }), 401);
  });

  it('answers 401 for a token it never gave, of any shape, without a database read for a malformed one', async () => {
    for (const token of ['x'.repeat(43), 'not-a-token', 'a'.repeat(5000)]) expectErrorBody(await usersWith(token), 401);
  });

  it('holds at most a bounded number per user: one more ends the oldest', async () => {
    const tokens = [];
    for (let index = 0; index <= SESSIONS_PER_USER; index += 1)
      tokens.push((await open(t.users.otherServiceProvider)).token);
    expectErrorBody(
      await call(t.app, { url: '/rest/api/participants?size=1', headers: bearer(tokens[0] as string) }),
      401,
    );
    expect(
      (
        await call(t.app, {
          url: '/rest/api/participants?size=1',
          headers: bearer(tokens[SESSIONS_PER_USER] as string),
        })
      ).statusCode,
    ).toBe(200);
  });

  it.runIf(testDatabaseKind === 'postgres')(
    'is shared by the instances of one database: opened at one, ended at the other',
    async () => {
      const other = await startOtherInstance(t);
      try {
        const { token } = await open(t.users.admin);
        expect((await other.app.inject({ url: '/rest/api/users?size=1', headers: bearer(token) })).statusCode).toBe(
          200,
        );
        expect(
          (await other.app.inject({ method: 'DELETE', url: '/rest/api/sessions/current', headers: bearer(token) }))
            .statusCode,
        ).toBe(204);
        expectErrorBody(await usersWith(token), 401);
      } finally {
        await other.close();
      }
    },
  );

  it('says who is signed in with Basic credentials too (no session: no end)', async () => {
    const current = await call(t.app, { url: '/rest/api/sessions/current', user: t.users.accessPointProvider });
    expect(current.json()).toEqual({ username: 'ap-provider', role: 'ACCESS_POINT_PROVIDER', expiresAt: null });
    expect(
      (await call(t.app, { method: 'DELETE', url: '/rest/api/sessions/current', user: t.users.accessPointProvider }))
        .statusCode,
    ).toBe(204);
  });
  describe('a new password or a deletion ends every session opened with the old password, however they race', () => {
    const ROUNDS = 4;
    const NEW_PASSWORD = 'a-second-long-password';

    it("the user's own change: no session opened meanwhile lives on, and the change never fails", async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const { user } = await addAuthority(`own-race-${round}`);
        const { changed, tokens, statuses } = await openingWhile(t.app, user, () =>
          call(t.app, {
            method: 'PUT',
            url: '/rest/api/users/me/password',
            user,
            payload: { currentPassword: FIRST_PASSWORD, newPassword: NEW_PASSWORD },
          }),
        );
        expect(changed.statusCode, changed.body).toBe(200);
        expect([...statuses].filter((status) => status !== 201 && status !== 401)).toEqual([]);
        expect(await liveAmong(tokens)).toBe(0);
      }
    });

    it("the ADMIN's reset: no session opened meanwhile lives on, and the reset never fails", async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const username = `reset-race-${round}`;
        const { identifier, user } = await addAuthority(username);
        const { changed, tokens, statuses } = await openingWhile(t.app, user, () =>
          call(t.app, {
            method: 'PUT',
            url: `/rest/api/users/${identifier}`,
            user: t.users.admin,
            payload: { username, role: 'REGISTRY_AUTHORITY', password: NEW_PASSWORD },
          }),
        );
        expect(changed.statusCode, changed.body).toBe(200);
        expect([...statuses].filter((status) => status !== 201 && status !== 401)).toEqual([]);
        expect(await liveAmong(tokens)).toBe(0);
      }
    });

    it("the ADMIN's delete never fails, and a session asked for meanwhile or after is refused with 401", async () => {
      for (let round = 0; round < ROUNDS; round += 1) {
        const { identifier, user } = await addAuthority(`delete-race-${round}`);
        const { changed, statuses } = await openingWhile(t.app, user, () =>
          call(t.app, { method: 'DELETE', url: `/rest/api/users/${identifier}`, user: t.users.admin }),
        );
        expect(changed.statusCode, changed.body).toBe(204);
        expect([...statuses].filter((status) => status !== 201 && status !== 401)).toEqual([]);
        expectErrorBody(await call(t.app, { method: 'POST', url: '/rest/api/sessions', user }), 401);
      }
    });

    it.runIf(testDatabaseKind === 'postgres')(
      'another instance that verified the old password a moment ago opens no session with it',
      async () => {
        // It has not heard the change yet (its notice is on the way): its verified credentials are the old ones.
        const other = await startOtherInstance(t, { followChanges: false });
        try {
          const { identifier, user } = await addAuthority('two-instances-race');
          const elsewhere = (user: TestUser) =>
            other.app.inject({
              method: 'POST',
              url: '/rest/api/sessions',
              headers: { authorization: user.authorization },
            });
          expect((await elsewhere(user)).statusCode).toBe(201);
          const changed = await call(t.app, {
            method: 'PUT',
            url: `/rest/api/users/${identifier}`,
            user: t.users.admin,
            payload: { username: 'two-instances-race', role: 'REGISTRY_AUTHORITY', password: NEW_PASSWORD },
          });
          expect(changed.statusCode, changed.body).toBe(200);
          expectErrorBody(await elsewhere(user), 401, 'Bad credentials');
          const deleted = await call(t.app, {
            method: 'DELETE',
            url: `/rest/api/users/${identifier}`,
            user: t.users.admin,
          });
          expect(deleted.statusCode).toBe(204);
          expectErrorBody(
            await elsewhere({ ...user, authorization: basic('two-instances-race', NEW_PASSWORD) }),
            401,
            'Bad credentials',
          );
        } finally {
          await other.close();
        }
      },
    );
  });
});
