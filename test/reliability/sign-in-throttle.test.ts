import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { credentialVerifier } from '../../src/users/credentials.js';
import { Role } from '../../src/http/auth.js';
import { setHashCostForTests } from '../../src/users/password.js';
import { insertUser } from '../../src/users/repository.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { basic, startTestApp, type TestApp } from '../helpers/app.js';
import { useTestHashCost } from '../helpers/test-users.js';

let t: TestApp;
let app: App;
const LOCK_MS = 1500;

beforeAll(async () => {
  t = await startTestApp();
  app = await buildApp({
    db: t.db,
    signInThrottle: { freeFailures: 2, firstDelayMs: 150, maxDelayMs: 600, maxFailures: 5, lockMs: LOCK_MS },
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await t.close();
});

async function signIn(authorization: string, remoteAddress: string) {
  const started = performance.now();
  const response = await app.inject({ url: '/rest/api/participants', headers: { authorization }, remoteAddress });
  return { response, ms: performance.now() - started };
}

describe('failed sign-ins', () => {
  it('are slowed down, then refused with 429 for a while, without locking the owner out elsewhere', async () => {
    const owner = t.users.serviceProvider;
    const wrong = basic(owner.username, 'not-the-password');
    const attacker = '203.0.113.7';
    const tries = [];
    for (let i = 0; i < 5; i += 1) {
      const attempt = await signIn(wrong, attacker);
      expectErrorBody(attempt.response, 401, 'Bad credentials');
      tries.push(attempt.ms);
    }
    // Failures 3, 4 and 5 wait 150, 300 and 600 ms on top of the password check.
    expect(tries[2]).toBeGreaterThanOrEqual(150);
    expect(tries[3]).toBeGreaterThanOrEqual(300);
    expect(tries[4]).toBeGreaterThanOrEqual(600);

    // Refused even with the right password: a locked-out guesser learns nothing, not even from the cache.
    const refused = await signIn(owner.authorization, attacker);
    const body = expectErrorBody(refused.response, 429, 'Too many failed attempts; try again later');
    expect(body.exception).toBe('TooManyRequestsError');
    expect(Number(refused.response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.response.headers['retry-after'])).toBeLessThanOrEqual(Math.ceil(LOCK_MS / 1000));
    expect(refused.response.headers['www-authenticate']).toBeUndefined();
    // Refused at once, not held for the throttle's delay (600 ms by now): a bound a loaded machine keeps, where 100 ms was not.
    expect(refused.ms).toBeLessThan(600);
    expectErrorBody((await signIn(wrong, attacker)).response, 429);

    // The owner's clients elsewhere keep working all along, and other users are untouched.
    expect((await signIn(owner.authorization, '198.51.100.20')).response.statusCode).toBe(200);
    expect((await signIn(t.users.otherServiceProvider.authorization, attacker)).response.statusCode).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, LOCK_MS + 100));
    expect((await signIn(owner.authorization, attacker)).response.statusCode).toBe(200);
  });

  it('are throttled the same way for usernames that do not exist, so the throttle reveals none', async () => {
    const nobody = basic(`nobody-${randomUUID()}`, 'whatever-password');
    for (let i = 0; i < 5; i += 1)
      expectErrorBody((await signIn(nobody, '192.0.2.9')).response, 401, 'Bad credentials');
    expectErrorBody((await signIn(nobody, '192.0.2.9')).response, 429);
  });

  it('answer 401 with the same body for an unknown user as for a wrong password', async () => {
    const unknown = await t.app.inject({
      url: '/rest/api/participants',
      headers: { authorization: basic(`ghost-${randomUUID()}`, 'x-password') },
    });
    const wrong = await t.app.inject({
      url: '/rest/api/participants',
      headers: { authorization: basic(t.users.admin.username, 'x-password') },
    });
    const strip = (body: Record<string, unknown>) => ({ ...body, timestamp: undefined });
    expect(strip(expectErrorBody(unknown, 401))).toEqual(strip(expectErrorBody(wrong, 401)));
    expect(unknown.headers['www-authenticate']).toBe(wrong.headers['www-authenticate']);
  });
});

describe('password checks', () => {
  it('take the same time for unknown users as for wrong passwords', async () => {
    // No throttle here: this measures the check itself, alternating the two kinds. What it costs is the process's
    // CPU time (scrypt on the thread pool included), which the other test files running at once leave alone: on an
    // idle machine that is its time, and on a loaded one the wall clock measures the load instead.
    // At the service's scrypt cost, which the rest of the suite lowers (test/each-file.ts): a user hashed at it, and
    // the unknown users' check made at it.
    setHashCostForTests();
    const timed = `timed-${randomUUID()}`;
    await insertUser(t.db, { username: timed, password: 'the-timed-password', role: Role.registryAuthority });
    const verifier = credentialVerifier(t.db, {
      throttle: { freeFailures: Number.POSITIVE_INFINITY, maxFailures: Number.POSITIVE_INFINITY },
    });
    const request = { ip: '127.0.0.1' } as never;
    const time = async (username: string) => {
      const started = process.cpuUsage();
      expect(await verifier.verify(username, 'wrong-password-123', request)).toBeNull();
      const spent = process.cpuUsage(started);
      return (spent.user + spent.system) / 1000;
    };
    const unknown: number[] = [];
    const known: number[] = [];
    for (let i = 0; i < 12; i += 1) {
      unknown.push(await time(`unknown-${randomUUID()}`));
      known.push(await time(timed));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
    const [u, k] = [median(unknown), median(known)];
    // Both run scrypt (tens of milliseconds), and their medians differ by less than a quarter.
    expect(u).toBeGreaterThan(10);
    expect(k).toBeGreaterThan(10);
    expect(
      Math.abs(u - k) / Math.max(u, k),
      `unknown ${u.toFixed(1)} ms, wrong password ${k.toFixed(1)} ms`,
    ).toBeLessThan(0.25);
    // 25 checks at the service's cost: about 30 s of wall time once four files load both cores.
  }, 90_000);
  afterAll(() => useTestHashCost());
});
