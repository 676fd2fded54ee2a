/**
 * `npm run abuse`: what three floods do to the service's ordinary users. The service runs as its own process
 * (src/server.ts, as in production) on loopback ports, on a fresh PostgreSQL database or (`--embedded`) a fresh
 * embedded data directory; the floods and the measuring client come through real sockets. Measured quiet and under
 * each flood, one after the other: a provider's sign-in (an authenticated GET of its participant, a new connection
 * each, p50/p99; its verified credentials are then cached, as for a client that signs in again), a cold sign-in (the
 * same by a user of the provider signing in for the first time, so its password is checked: scrypt), and an update (a
 * PUT of that participant, p50/p99).
 *
 *   npx tsx scripts/abuse.ts [--embedded] [--samples 40] [--slow-bodies 500] [--polls 200]
 *
 * Floods: (a) hashing: 16 connections at a time from 127.0.0.2-17, Basic credentials of unknown usernames;
 * (b) slow bodies: up to `--slow-bodies` connections from 127.0.0.50 with another provider's credentials, each
 * declaring 1 MB and sending a byte every 2 s, and connecting again a second after its connection ends; (c) long polls:
 * that other provider holding up to `--polls` `wait` polls of the change feed from 127.0.0.100-109, a refused one sent
 * again after its Retry-After.
 * Loopback only; every flood and the whole run are bounded in count and time. By hand, not in CI.
 * PostgreSQL: the server of TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), a database of its own.
 */
import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  basic,
  call,
  freshStorage,
  provision,
  startService,
  stopService,
  type Call,
} from '../test/reliability/harness/service.js';

const { values: options } = parseArgs({
  options: {
    embedded: { type: 'boolean', default: false },
    samples: { type: 'string', default: '40' },
    'slow-bodies': { type: 'string', default: '500' },
    polls: { type: 'string', default: '200' },
  },
});
const SAMPLES = Number(options.samples);
const SLOW_BODIES = Math.min(Number(options['slow-bodies']), 2000);
const POLLS = Math.min(Number(options.polls), 2000);
/** The whole run ends by then, whatever happens. */
const RUN_LIMIT_MS = 15 * 60_000;
/** A flood runs this long before the measuring starts. */
const WARM_UP_MS = 5000;
const REQUEST_LIMIT_MS = 30_000;
/** Under the default body limit (1 MiB), so that the service reads it rather than refusing it at once (413). */
const DECLARED_BODY_BYTES = 1_000_000;
/** Cold sign-ins per row: each needs a user of its own, made before the floods. */
const COLD_SAMPLES = Math.min(SAMPLES, 10);
const ROWS = 4;

interface Measured {
  signIn: number[];
  coldSignIn: number[];
  update: number[];
}

/** What the flood's own requests were answered, by status (0: no answer, the connection closed or failed). */
type FloodAnswers = Map<number, number>;

interface Flood {
  name: string;
  /** Starts the flood; the function it returns stops it (`signal` aborts its requests) and resolves once it has. */
  start(baseUrl: URL, answers: FloodAnswers, signal: AbortSignal): () => Promise<void>;
}

/** Counts an answer; not those cut by the flood's own stop. */
const count = (answers: FloodAnswers, status: number, signal: AbortSignal) => {
  if (!signal.aborted) answers.set(status, (answers.get(status) ?? 0) + 1);
};

const NO_ANSWER = { status: 0, body: '', retryAfter: 0 };

/** A request from `localAddress` on a connection of its own; its status, 0 when it got none. */
function statusFrom(
  baseUrl: URL,
  localAddress: string,
  path: string,
  authorization: string,
  signal: AbortSignal,
): Promise<{ status: number; body: string; retryAfter: number }> {
  return new Promise((resolve) => {
    const settings = { agent: false, localAddress, timeout: 70_000, headers: { authorization }, signal };
    const request = http.request(new URL(path, baseUrl), settings, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      const retryAfter = Number(response.headers['retry-after'] ?? 0);
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), retryAfter }),
      );
      response.on('error', () => resolve(NO_ANSWER));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(NO_ANSWER));
    request.end();
  });
}

/** Loops `work` in `lanes` parallel lanes until stopped; resolves the stop once every lane has ended. */
function lanes(count: number, work: (lane: number, running: () => boolean) => Promise<void>): () => Promise<void> {
  let running = true;
  const all = Array.from({ length: count }, async (_, lane) => {
    while (running) await work(lane, () => running);
  });
  return async () => {
    running = false;
    await Promise.all(all);
  };
}

const hashingFlood: Flood = {
  name: '(a) hashing: 16 addresses, unknown users',
  start(baseUrl, answers, signal) {
    let n = 0;
    return lanes(16, async (lane) => {
      n += 1;
      const { status } = await statusFrom(
        baseUrl,
        `127.0.0.${2 + lane}`,
        '/rest/api/participants',
        basic(`nobody-${lane}-${n}`, 'not-a-password'),
        signal,
      );
      count(answers, status, signal);
    });
  },
};

function slowBodyFlood(authorization: string): Flood {
  return {
    name: `(b) slow bodies: ${SLOW_BODIES} connections, one address`,
    start(baseUrl, answers, signal) {
      const sockets = new Set<Socket>();
      const head = [
        'POST /rest/api/participants HTTP/1.1',
        `Host: ${baseUrl.host}`,
        `Authorization: ${authorization}`,
        'Content-Type: application/json',
        `Content-Length: ${DECLARED_BODY_BYTES}`,
        '',
        '{',
      ].join('\r\n');
      const stop = lanes(
        SLOW_BODIES,
        (_, running) =>
          new Promise<void>((resolve) => {
            const socket = connect(
              { host: baseUrl.hostname, port: Number(baseUrl.port), localAddress: '127.0.0.50' },
              () => socket.write(head),
            );
            sockets.add(socket);
            const trickle = setInterval(() => socket.write(' '), 2000);
            let answer = '';
            socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
            socket.on('error', () => undefined);
            socket.on('close', () => {
              clearInterval(trickle);
              sockets.delete(socket);
              count(answers, Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0), signal);
              // Reconnect after a pause, as a patient attacker would; stopped, resolve at once.
              if (running()) setTimeout(resolve, 1000).unref();
              else resolve();
            });
          }),
      );
      signal.addEventListener('abort', () => {
        for (const socket of sockets) socket.destroy();
      });
      return stop;
    },
  };
}

function longPollFlood(authorization: string): Flood {
  return {
    name: `(c) long polls: one provider, ${POLLS} polls`,
    start(baseUrl, answers, signal) {
      // The cursor of the latest answer (sealed: cursors cannot be compared), from which every lane polls.
      let after = '';
      return lanes(POLLS, async (lane, running) => {
        const address = `127.0.0.${100 + (lane % 10)}`;
        const { status, body, retryAfter } = await statusFrom(
          baseUrl,
          address,
          `/rest/api/changes?${after}wait=60`,
          authorization,
          signal,
        );
        count(answers, status, signal);
        if (status === 200) after = `after=${(JSON.parse(body) as { next: string }).next}&`;
        // A poll refused is sent again when the answer says (a client that polls too much, not an attacker).
        else if (running()) await sleep(Math.max(retryAfter * 1000, 500));
      });
    },
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function timed(baseUrl: string, request: Call, expected: number): Promise<number> {
  const started = performance.now();
  const answer = await call(baseUrl, { ...request, timeoutMs: REQUEST_LIMIT_MS }).catch(() => undefined);
  const ms = performance.now() - started;
  return answer?.status === expected ? ms : Number.POSITIVE_INFINITY;
}

/**
 * `SAMPLES` sign-ins and `SAMPLES` updates of the provider's participant, one after the other, and `COLD_SAMPLES` first
 * sign-ins of its users (taken from `coldUsers`).
 */
async function measure(baseUrl: string, authorization: string, path: string, coldUsers: string[]): Promise<Measured> {
  const measured: Measured = { signIn: [], coldSignIn: [], update: [] };
  for (let i = 0; i < SAMPLES; i += 1) {
    measured.signIn.push(await timed(baseUrl, { path, authorization }, 200));
    const cold = i < COLD_SAMPLES ? coldUsers.shift() : undefined;
    if (cold) measured.coldSignIn.push(await timed(baseUrl, { path, authorization: cold }, 200));
    const body = { processes: [], contact: { name: `Abuse ${i}` } };
    measured.update.push(await timed(baseUrl, { method: 'PUT', path, authorization, body }, 200));
  }
  return measured;
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : 'failed');

function row(name: string, measured: Measured, answers?: FloodAnswers): string {
  const figures = [measured.signIn, measured.coldSignIn, measured.update]
    .flatMap((values) => [percentile(values, 50), percentile(values, 99)])
    .map(ms);
  const flood = answers
    ? [...answers]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status || 'none'}×${n}`)
        .join(' ')
    : '';
  return `| ${name.padEnd(42)} | ${figures.map((figure) => figure.padStart(8)).join(' | ')} | ${flood}`;
}

/** Users of the provider that have never signed in, enough for every row's cold sign-ins. */
async function coldUsersOf(baseUrl: string, admin: string, serviceProvider: string): Promise<string[]> {
  const users: string[] = [];
  for (let i = 0; i < ROWS * COLD_SAMPLES; i += 1) {
    const [username, password] = [`abuse-cold-${i}`, `abuse-cold-${i}-long-password`];
    const answer = await call(baseUrl, {
      method: 'POST',
      path: '/rest/api/users',
      authorization: admin,
      body: { username, password, role: 'SERVICE_PROVIDER', serviceProvider: { identifier: serviceProvider } },
    });
    if (answer.status !== 201) throw new Error(`a user was not created: ${answer.status} ${answer.body}`);
    users.push(basic(username, password));
  }
  return users;
}

async function main(): Promise<void> {
  const storage = await freshStorage(options.embedded ? 'embedded' : 'postgres');
  const service = await startService({ ...storage.env, LOG_REQUESTS: 'false' }, undefined, 'source');
  try {
    const baseUrl = new URL(service.url);
    const {
      admin,
      providers: [flooder, measured],
    } = await provision(service.url);
    if (!flooder || !measured) throw new Error('provisioning made fewer than two providers');
    const organization = '923609016';
    const path = `/rest/api/participants/${encodeURIComponent(`iso6523-actorid-upis::0192:${organization}`)}`;
    const created = await call(service.url, {
      method: 'POST',
      path: '/rest/api/participants',
      authorization: measured.authorization,
      body: {
        icd: '0192',
        organizationIdentifier: organization,
        name: 'Measured',
        processes: [],
        contact: { name: 'Measured' },
      },
    });
    if (created.status !== 201)
      throw new Error(`the measured participant was not created: ${created.status} ${created.body}`);
    const coldUsers = await coldUsersOf(service.url, admin, measured.id);

    const lines = [
      `${options.embedded ? 'embedded' : 'PostgreSQL'}, ${SAMPLES} samples each, milliseconds`,
      `| ${'flood'.padEnd(42)} | ${['sign-in', 'p99', 'cold', 'p99', 'update', 'p99'].map((name) => name.padStart(8)).join(' | ')} | the flood's own answers`,
      `| ${''.padEnd(42)} | ${['p50', '', 'p50', '', 'p50', ''].map((name) => name.padStart(8)).join(' | ')} | (status×count; none: no answer)`,
      row('none (quiet)', await measure(service.url, measured.authorization, path, coldUsers)),
    ];
    console.log(lines.join('\n'));
    for (const flood of [hashingFlood, slowBodyFlood(flooder.authorization), longPollFlood(flooder.authorization)]) {
      const answers: FloodAnswers = new Map();
      const aborting = new AbortController();
      const stop = flood.start(baseUrl, answers, aborting.signal);
      await sleep(WARM_UP_MS);
      const figures = await measure(service.url, measured.authorization, path, coldUsers);
      const stopped = stop();
      aborting.abort();
      await stopped;
      console.log(row(flood.name, figures, answers));
      await sleep(1000);
    }
  } finally {
    await stopService(service);
    await storage.drop();
  }
}

const limit = setTimeout(() => {
  console.error(`abuse: stopped after ${RUN_LIMIT_MS / 60_000} minutes`);
  process.exit(1);
}, RUN_LIMIT_MS);
limit.unref();
await main();
