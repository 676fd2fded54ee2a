import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App, type AppOptions } from '../../src/app.js';
import { loggerOptions } from '../../src/operations/logging.js';
import { setHashCostForTests } from '../../src/users/password.js';
import { expectErrorBody, median } from '../helpers/assertions.js';
import { basic, startTestApp, type TestApp } from '../helpers/app.js';
import { useTestHashCost } from '../helpers/test-users.js';

// Sign-in attacks are a socket's: every request here goes through a real connection from a loopback address
// of its own (127.0.0.0/8 is all this machine's), so the server sees distinct client addresses.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

interface Sent {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  json<T = Record<string, unknown>>(): T;
  ms: number;
}

/** Listens on 127.0.0.1 with these options; closed after the describe. */
function useServer(options: Omit<AppOptions, 'db'>) {
  const server = { app: undefined as unknown as App, port: 0 };
  beforeAll(async () => {
    server.app = await buildApp({ db: t.db, ...options });
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    server.port = (server.app.server.address() as { port: number }).port;
  });
  afterAll(() => server.app.close());
  return server;
}

/** A GET of the participants over a new connection from `from`; `signal` ends it unanswered. */
function send(
  port: number,
  from: string,
  authorization: string,
  forwardedFor?: string,
  signal?: AbortSignal,
): Promise<Sent> {
  const started = performance.now();
  const headers: Record<string, string> = {
    authorization,
    ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
  };
  return new Promise((resolve, reject) => {
    const options = {
      host: '127.0.0.1',
      port,
      localAddress: from,
      path: '/rest/api/participants',
      headers,
      agent: false,
      signal,
    };
    const call = request(options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({
          statusCode: response.statusCode as number,
          headers: response.headers as Record<string, string>,
          body,
          json: () => JSON.parse(body),
          ms: performance.now() - started,
        });
      });
    });
    call.setTimeout(30_000, () => call.destroy(new Error('no answer in 30 s')));
    call.on('error', reject);
    call.end();
  });
}

const statuses = (answers: Sent[]) => answers.map((answer) => answer.statusCode).sort();
const count = (answers: Sent[], status: number) => answers.filter((answer) => answer.statusCode === status).length;
const nobody = () => basic(`nobody-${randomUUID()}`, 'a-wrong-password');

describe('behind a proxy named in REGISTRY_TRUSTED_PROXIES', () => {
  const lines: string[] = [];
  const server = useServer({
    trustedProxies: '127.0.0.1, ::1',
    signInThrottle: { maxFailures: 5, lockMs: 60_000, freeFailures: 100 },
    logger: loggerOptions('warn', { write: (line: string) => void lines.push(line) }),
  });

  it('counts failures per forwarded client address: a guesser locks out only itself, the owner elsewhere signs in at once', async () => {
    const owner = t.users.authority;
    const wrong = basic(owner.username, 'not-the-password');
    const checks: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const guess = await send(server.port, '127.0.0.1', wrong, '203.0.113.7');
      expectErrorBody(guess, 401, 'Bad credentials');
      checks.push(guess.ms);
    }
    const locked = expectErrorBody(await send(server.port, '127.0.0.1', owner.authorization, '203.0.113.7'), 429);
    expect(locked.message).toBe('Too many failed attempts; try again later');
    // The proxy appends the address it saw: what a client writes before it is not believed.
    expectErrorBody(await send(server.port, '127.0.0.1', owner.authorization, '198.51.100.20, 203.0.113.7'), 429);

    const elsewhere = await send(server.port, '127.0.0.1', owner.authorization, '198.51.100.20');
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
    // At once: a password check's time, not a lock's (measured beside the guesses', so that a loaded machine slows both).
    expect(elsewhere.ms).toBeLessThan(3 * Math.max(...checks));
  });

  it('says once in the log that a peer it does not trust sends X-Forwarded-For', async () => {
    const warnings = () => lines.filter((line) => line.includes('X-Forwarded-For'));
    expect((await send(server.port, '127.0.0.1', t.users.admin.authorization, '198.51.100.30')).statusCode).toBe(200);
    expect(warnings()).toEqual([]);
    for (let i = 0; i < 2; i += 1) {
      expect((await send(server.port, '127.0.0.2', t.users.admin.authorization, '198.51.100.30')).statusCode).toBe(200);
    }
    expect(warnings()).toHaveLength(1);
    expect(JSON.parse(warnings()[0] as string)).toMatchObject({ peer: '127.0.0.2' });
  });
});

describe('guesses sent at once from one address', () => {
  const server = useServer({
    signInThrottle: { maxFailures: 10, lockMs: 60_000, freeFailures: 100 },
    hashing: { perAddress: 100 },
  });

  it('are checked at most SIGN_IN_MAX_FAILURES times; the rest, and then the right password, are answered 429', async () => {
    const owner = t.users.otherServiceProvider;
    const guesses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        send(server.port, '127.0.0.3', basic(owner.username, `guess-${i}-password`)),
      ),
    );
    expect(count(guesses, 401), JSON.stringify(statuses(guesses))).toBe(10);
    expect(count(guesses, 429)).toBe(30);
    for (const refused of guesses.filter((guess) => guess.statusCode === 429)) {
      expectErrorBody(refused, 429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expectErrorBody(await send(server.port, '127.0.0.3', owner.authorization), 429);
    expect((await send(server.port, '127.0.0.4', owner.authorization)).statusCode).toBe(200);
  });
});

describe('password checks', () => {
  const server = useServer({ signInThrottle: { freeFailures: 10_000, maxFailures: 10_000 } });

  it('of one address beyond SIGN_IN_CHECKS_PER_ADDRESS are answered 429 at once; the same credentials sent at once make one check', async () => {
    // At the service's scrypt cost (the suite lowers it): a check outlasts the burst's arrival, as it does in service,
    // even when a loaded machine spreads the twelve requests out.
    setHashCostForTests();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => send(server.port, '127.0.0.5', nobody())),
    ).finally(useTestHashCost);
    // Four are checked; a check that ends before the last ones arrive lets one more in (on a slow machine).
    expect(count(answers, 401), JSON.stringify(statuses(answers))).toBeGreaterThanOrEqual(4);
    expect(count(answers, 429), JSON.stringify(statuses(answers))).toBeGreaterThanOrEqual(4);
    for (const refused of answers.filter((answer) => answer.statusCode === 429)) {
      expectErrorBody(refused, 429, 'Too many password checks from this address at once; try again later');
      expect(refused.headers['retry-after']).toBe('1');
    }

    // A client's first burst, before its credentials are kept, is answered in full.
    server.app.credentials.forgetAll();
    const burst = await Promise.all(
      Array.from({ length: 20 }, () => send(server.port, '127.0.0.6', t.users.authority.authorization)),
    );
    expect(statuses(burst)).toEqual(Array(20).fill(200));
  });

  it("leave a provider's sign-in prompt while sixteen other addresses flood unknown usernames", async () => {
    const signIn = async (from: string) => {
      server.app.credentials.forgetAll();
      const answer = await send(server.port, from, t.users.serviceProvider.authorization);
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.ms;
    };
    // A provider that signs in often from its one address (an integration behind its NAT): ten checks just now.
    const provider = '127.0.2.1';
    const quiet = [];
    for (let i = 0; i < 10; i += 1) quiet.push(await signIn(provider));
    const flooding = new AbortController();
    const checkedDuringTheFlood: number[] = [];
    const flood = async (from: string) => {
      for (let sent = 0; !flooding.signal.aborted && sent < 500; sent += 1) {
        const answer = await send(server.port, from, nobody(), undefined, flooding.signal).catch(() => undefined);
        if (answer) expect([401, 429]).toContain(answer.statusCode);
        if (answer?.statusCode === 401) checkedDuringTheFlood.push(answer.ms);
      }
    };
    // Three connections each: a flood at least as heavy as a provider's sign-in, within SIGN_IN_CHECKS_PER_ADDRESS.
    const floods = Array.from({ length: 16 }, (_, i) =>
      Array.from({ length: 3 }, () => flood(`127.0.1.${i + 1}`)),
    ).flat();
    try {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // Its right password never fails, so its checks go before the flood's, however often it signed in lately.
      checkedDuringTheFlood.length = 0;
      const flooded = [await signIn(provider), await signIn(provider), await signIn(provider)];
      await expect.poll(() => checkedDuringTheFlood.length, { timeout: 60_000 }).toBeGreaterThanOrEqual(9);
      const floodsCheck = median(checkedDuringTheFlood);
      console.log(
        `a provider's sign-in: ${Math.max(...quiet).toFixed(0)} ms quiet (slowest of ten), ${flooded.map((ms) => ms.toFixed(0)).join(', ')} ms during the flood, whose checks took ${floodsCheck.toFixed(0)} ms (median of ${checkedDuringTheFlood.length})`,
      );
      // In turn among the flood's 48 connections, it would wait as long as their checks; ahead of them, for the one check
      // running and its own. Against the same moment's flood, so that a loaded machine slows both alike.
      expect(Math.max(...flooded)).toBeLessThan(floodsCheck / 3);
    } finally {
      flooding.abort();
      await Promise.all(floods);
    }
  }, 120_000);
});
