import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App, type AppOptions } from '../../src/app.js';
import type { LocalSml } from '../../dev/local-sml.js';
import { loggerOptions } from '../../src/operations/logging.js';
import { basic, startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { expectStatus } from '../helpers/administration.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { addProcess } from '../helpers/catalogue.js';
import { feedEnd } from '../helpers/feed.js';
import { useDeliveryTestApp } from '../helpers/delivery.js';
import { addParticipant, PARTICIPANTS } from '../helpers/participants.js';

/**
 * Every failed sign-in, lock, refusal by a per-address or per-user limit and password change is one JSON log line
 * naming the event, the username (never a password) and the client address, also with LOG_REQUESTS=false, and is
 * counted in `registry_security_events_total`.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

interface Line {
  level: number;
  msg: string;
  event?: string;
  username?: string | null;
  clientAddress?: string;
  [key: string]: unknown;
}

/** An instance on the test database logging to memory, reads unlogged (LOG_REQUESTS=false). */
function useLoggingApp(options: Omit<AppOptions, 'db'> = {}) {
  const lines: string[] = [];
  const started = {
    app: undefined as unknown as App,
    lines,
    events: (event: string) => lines.map((line) => JSON.parse(line) as Line).filter((line) => line.event === event),
  };
  beforeAll(async () => {
    started.app = await buildApp({
      db: t.db,
      logReads: false,
      logger: loggerOptions('info', { write: (line: string) => void lines.push(line) }),
      ...options,
    });
    await started.app.ready();
  });
  afterAll(() => started.app.close());
  return started;
}

/** The count of `event` in the instance's `/metrics` text. */
async function counted(app: App, event: string): Promise<number> {
  const text = await app.metrics.metrics();
  const found = new RegExp(`^registry_security_events_total\\{event="${event}"\\} (\\d+)$`, 'm').exec(text);
  return Number(found?.[1]);
}

const get = (app: App, authorization: string | undefined, remoteAddress: string, url = '/rest/api/accessPoints') =>
  app.inject({ url, headers: authorization ? { authorization } : {}, remoteAddress });

describe('sign-in events', () => {
  const logging = useLoggingApp({ signInThrottle: { maxFailures: 3, lockMs: 60_000, freeFailures: 100 } });

  it('a failed sign-in, a lock and a refusal of the locked pair: one line each, with username and address, never the password', async () => {
    const user = t.users.authority;
    const address = '203.0.113.21';
    const secrets = ['first-wrong-secret', 'second-wrong-secret', 'third-wrong-secret'];
    for (const secret of secrets) expectErrorBody(await get(logging.app, basic(user.username, secret), address), 401);
    expectErrorBody(await get(logging.app, user.authorization, address), 429);

    const failed = logging.events('sign_in_failed').filter((line) => line.clientAddress === address);
    expect(failed).toHaveLength(3);
    expect(failed[0]).toMatchObject({
      level: 40,
      username: user.username,
      clientAddress: address,
      msg: 'sign-in failed: wrong password or unknown user',
    });
    expect(logging.events('sign_in_locked')).toEqual([
      expect.objectContaining({ username: user.username, clientAddress: address, lockedUntil: expect.any(String) }),
    ]);
    expect(logging.events('sign_in_refused')).toEqual([
      expect.objectContaining({ username: user.username, clientAddress: address }),
    ]);
    const all = logging.lines.join('\n');
    for (const secret of [...secrets, user.password]) expect(all).not.toContain(secret);
    // LOG_REQUESTS=false: no request lines for the reads, the events all the same.
    expect(all).not.toContain('incoming request');
    expect(await counted(logging.app, 'sign_in_failed')).toBe(3);
    expect(await counted(logging.app, 'sign_in_locked')).toBe(1);
    expect(await counted(logging.app, 'sign_in_refused')).toBe(1);
    expect(await counted(logging.app, 'password_checks_refused')).toBe(0);
  });

  it('password checks refused per address: one line each, naming the username asked for', async () => {
    const address = '203.0.113.22';
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => get(logging.app, basic(`nobody-${randomUUID()}`, 'a-wrong-password'), address)),
    );
    const refused = answers.filter((answer) => answer.statusCode === 429).length;
    expect(refused).toBeGreaterThan(0);
    const lines = logging.events('password_checks_refused');
    expect(lines).toHaveLength(refused);
    expect(lines[0]).toMatchObject({ clientAddress: address, username: expect.stringMatching(/^nobody-/) });
    expect(await counted(logging.app, 'password_checks_refused')).toBe(refused);
  });

  it('a password change, a wrong current password and a lift of a lock, by their users', async () => {
    const user = await (async (): Promise<TestUser> => {
      const username = `changer-${randomUUID().slice(0, 8)}`;
      const created = expectStatus(
        await t.app.inject({
          method: 'POST',
          url: '/rest/api/users',
          headers: { authorization: t.users.admin.authorization },
          payload: { username, password: 'first-long-password', role: 'REGISTRY_AUTHORITY' },
        }),
        201,
      );
      return {
        username: created.username,
        password: 'first-long-password',
        authorization: basic(created.username, 'first-long-password'),
      };
    })();
    const change = (currentPassword: string) =>
      logging.app.inject({
        method: 'PUT',
        url: '/rest/api/users/me/password',
        headers: { authorization: user.authorization },
        payload: { currentPassword, newPassword: 'second-long-password' },
        remoteAddress: '203.0.113.23',
      });
    expectErrorBody(await change('not-my-password'), 400);
    expect((await change(user.password)).statusCode).toBe(200);
    expect(logging.events('password_change_failed')).toEqual([
      expect.objectContaining({ username: user.username, clientAddress: '203.0.113.23' }),
    ]);
    expect(logging.events('password_changed')).toEqual([
      expect.objectContaining({ username: user.username, clientAddress: '203.0.113.23' }),
    ]);
    expect(logging.lines.join('\n')).not.toMatch(/not-my-password|second-long-password|first-long-password/);

    const [lock] = await vi.waitFor(
      async () => {
        const page = expectStatus(
          await logging.app.inject({
            url: `/rest/api/sign-in-locks?username=${t.users.authority.username}`,
            headers: { authorization: t.users.admin.authorization },
          }),
          200,
        );
        expect(page.content).toHaveLength(1);
        return page.content as Array<{ identifier: string }>;
      },
      { timeout: 5000, interval: 50 },
    );
    expect(
      (
        await logging.app.inject({
          method: 'DELETE',
          url: `/rest/api/sign-in-locks/${lock?.identifier}`,
          headers: { authorization: t.users.admin.authorization },
          remoteAddress: '198.51.100.5',
        })
      ).statusCode,
    ).toBe(204);
    expect(logging.events('sign_in_lock_lifted')).toEqual([
      expect.objectContaining({
        username: t.users.authority.username,
        clientAddress: '198.51.100.5',
        lockedAddress: '203.0.113.21',
        liftedBy: t.users.admin.username,
      }),
    ]);
    expect(await counted(logging.app, 'password_changed')).toBe(1);
    expect(await counted(logging.app, 'sign_in_lock_lifted')).toBe(1);
  });
});

describe('an address locked as a whole', () => {
  const logging = useLoggingApp({ signInThrottle: { maxFailures: 1, lockMs: 60_000, freeFailures: 100 } });

  it('is one line when it is locked and one when an ADMIN lifts it, with no username', async () => {
    const address = '203.0.113.25';
    const guessed = ['first', 'second', 'third', 'fourth'].map((ordinal) => `${ordinal}-${randomUUID()}`);
    for (const username of guessed)
      expectErrorBody(await get(logging.app, basic(username, 'a-wrong-password'), address), 401);
    await vi.waitFor(
      () =>
        expect(logging.events('sign_in_address_locked')).toEqual([
          expect.objectContaining({
            msg: 'sign-in locked for every username from this address: it holds the most locks of usernames one address may',
            username: guessed[3],
            clientAddress: address,
            lockedUntil: expect.any(String),
          }),
        ]),
      { timeout: 5000, interval: 50 },
    );
    expect(await counted(logging.app, 'sign_in_address_locked')).toBe(1);

    const page = expectStatus(
      await logging.app.inject({
        url: '/rest/api/sign-in-locks?size=2000',
        headers: { authorization: t.users.admin.authorization },
      }),
      200,
    );
    const whole = (page.content as Array<{ identifier: string; username: string | null; clientAddress: string }>).find(
      (lock) => lock.clientAddress === address && lock.username === null,
    );
    expect(
      (
        await logging.app.inject({
          method: 'DELETE',
          url: `/rest/api/sign-in-locks/${whole?.identifier}`,
          headers: { authorization: t.users.admin.authorization },
          remoteAddress: '198.51.100.6',
        })
      ).statusCode,
    ).toBe(204);
    expect(logging.events('sign_in_lock_lifted')).toEqual([
      expect.objectContaining({
        username: null,
        clientAddress: '198.51.100.6',
        lockedAddress: address,
        liftedBy: t.users.admin.username,
      }),
    ]);
  });
});

describe('refusals by the per-address and per-user limits', () => {
  const inFlight = useLoggingApp({ maxRequestsPerAddress: 1, maxFeedPollsPerUser: 1 });

  it('requests in flight per address and waiting feed polls per user', async () => {
    const admin = t.users.admin;
    const { cursor } = await feedEnd(t.db);
    const poll = (remoteAddress: string) =>
      get(
        inFlight.app,
        admin.authorization,
        remoteAddress,
        `/rest/api/changes?after=${cursor}&resource=capability&wait=2`,
      );
    const held = poll('203.0.113.31');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expectErrorBody(await get(inFlight.app, admin.authorization, '203.0.113.31'), 429);
    expect(inFlight.events('requests_in_flight_refused')).toEqual([
      expect.objectContaining({ username: admin.username, clientAddress: '203.0.113.31' }),
    ]);
    expectErrorBody(await poll('203.0.113.32'), 429);
    expect(inFlight.events('feed_polls_refused')).toEqual([
      expect.objectContaining({ username: admin.username, clientAddress: '203.0.113.32' }),
    ]);
    expect((await held).statusCode).toBe(200);
    expect(await counted(inFlight.app, 'requests_in_flight_refused')).toBe(1);
    expect(await counted(inFlight.app, 'feed_polls_refused')).toBe(1);
  });
});

describe('SML calls per user', () => {
  let sml: LocalSml;
  let own: TestApp;
  let app: App;
  useDeliveryTestApp((started) => ({ sml, t: own, app } = started));

  it('a second migration key asked while the first waits for the SML is refused, counted as its event', async () => {
    const process = await addProcess(app, own.users.admin);
    const participant = await addParticipant(app, own.users.serviceProvider, {
      processes: [{ identifier: process.identifier }],
    });
    await vi.waitFor(
      async () => {
        const network = expectStatus(
          await app.inject({
            url: `${PARTICIPANTS}/${participant.identifier}/network`,
            headers: { authorization: own.users.serviceProvider.authorization },
          }),
          200,
        );
        expect(network.sml.state).toBe('registered');
      },
      { timeout: 10_000, interval: 50 },
    );
    sml.delay(1000);
    const ask = () =>
      app.inject({
        method: 'POST',
        url: `${PARTICIPANTS}/${participant.identifier}/migration-out`,
        headers: { authorization: own.users.serviceProvider.authorization },
      });
    const answers = await Promise.all([ask(), ask()]);
    sml.delay(0);
    expect(answers.map((answer) => answer.statusCode)).toContain(429);
    expect(await counted(app, 'sml_calls_refused')).toBe(1);
  });
});
