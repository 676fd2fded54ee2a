import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migratedDataDirectory, TEST_DATABASE_URL } from '../../helpers/database.js';

/** The real service (dist/server.js, or src/server.ts through tsx) as a child process, found through its JSON log lines. */
export interface RunningService {
  url: string;
  managementUrl: string;
  child: ChildProcess;
  /** Every line the process wrote to standard output and standard error. */
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export const ADMIN_PASSWORD = 'reliability-admin-password';

/**
 * Where a service keeps its data: a fresh PostgreSQL database, or a fresh embedded data directory that holds the
 * migrated database (what these tests are about comes after a start; the start on nothing is first-start.test.ts's).
 */
export interface Storage {
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function freshStorage(kind: 'postgres' | 'embedded'): Promise<Storage> {
  if (kind === 'embedded') {
    const dir = await migratedDataDirectory(mkdtempSync(join(tmpdir(), 'registry-reliability-')));
    return { env: { REGISTRY_DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `reliability_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    async drop() {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

function logMessage(line: string): string | undefined {
  try {
    return (JSON.parse(line) as { msg?: string }).msg;
  } catch {
    return undefined;
  }
}

/** The build in dist/ (tests, built by their global set-up; the soak), or the sources through tsx (scripts run unbuilt). */
const ENTRY = { source: ['--import', 'tsx', 'src/server.ts'], built: ['dist/server.js'] };

/** Starts the service on free ports and resolves once both ports listen. */
export function startService(
  env: Record<string, string>,
  timeoutMs = 90_000,
  entry: keyof typeof ENTRY = 'built',
  keepLines = Number.POSITIVE_INFINITY,
): Promise<RunningService> {
  const { DATABASE_URL: _, REGISTRY_DATA_DIR: __, TEST_DATABASE: ___, ...inherited } = process.env;
  const child = spawn(process.execPath, ENTRY[entry], {
    env: {
      ...inherited,
      HOST: '127.0.0.1',
      PORT: '0',
      MANAGEMENT_PORT: '0',
      LOG_LEVEL: 'info',
      REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      REGISTRY_DEMO: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    let url: string | undefined;
    const timer = setTimeout(
      () => fail(new Error(`service did not start in ${timeoutMs} ms:\n${output.join('\n')}`)),
      timeoutMs,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    const onLine = (line: string) => {
      output.push(line);
      if (output.length > keepLines) output.shift();
      const msg = logMessage(line) ?? '';
      const api = /^registry listening on (\S+)/.exec(msg);
      if (api) url = api[1];
      const management = /^health and metrics on (\S+)\/health\/ready/.exec(msg);
      if (management && url) {
        clearTimeout(timer);
        resolve({ url, managementUrl: management[1] as string, child, output, exited });
      }
    };
    for (const stream of [child.stdout, child.stderr]) {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        lines.forEach(onLine);
      });
    }
    void exited.then(({ code, signal }) =>
      fail(new Error(`service exited (${code ?? signal}) before listening:\n${output.join('\n')}`)),
    );
  });
}

export interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
  json<T = Record<string, unknown>>(): T;
}

export interface Call {
  method?: string;
  path: string;
  authorization?: string;
  body?: unknown;
  timeoutMs?: number;
  /** Sent as X-Request-Id, so the request can be found in the service's log. */
  requestId?: string;
  /** A keep-alive agent; by default every request has a connection of its own. */
  agent?: http.Agent;
  accept?: string;
}

/** One request on a connection of its own (no keep-alive), so a killed server fails exactly the requests it had. */
export function call(
  baseUrl: string,
  { method = 'GET', path, authorization, body, timeoutMs = 30_000, requestId, agent, accept }: Call,
): Promise<Answer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const request = http.request(
      new URL(path, baseUrl),
      {
        method,
        agent: agent ?? false,
        timeout: timeoutMs,
        headers: {
          ...(authorization ? { authorization } : {}),
          ...(requestId ? { 'x-request-id': requestId } : {}),
          ...(accept ? { accept } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: response.statusCode ?? 0,
            body: text,
            headers: response.headers,
            json: () => JSON.parse(text),
          });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
    request.end(payload);
  });
}

export const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

export interface Actors {
  admin: string;
  providers: { id: string; authorization: string }[];
}

async function created(baseUrl: string, request: Call): Promise<{ identifier: string }> {
  const answer = await call(baseUrl, request);
  if (answer.status !== 201) throw new Error(`${request.method} ${request.path}: ${answer.status} ${answer.body}`);
  return answer.json<{ identifier: string }>();
}

/** Two service providers with a SERVICE_PROVIDER user each, made through the administration API. */
export async function provision(baseUrl: string): Promise<Actors> {
  const admin = basic('admin', ADMIN_PASSWORD);
  const post = (path: string, body: unknown) => created(baseUrl, { method: 'POST', path, authorization: admin, body });
  const apProvider = await post('/rest/api/access-point-providers', {
    title: 'Reliability AP provider',
    contact: { name: 'Ops' },
  });
  const accessPoint = await post('/rest/api/accessPoints', {
    title: 'Reliability AP',
    provider: { identifier: apProvider.identifier },
    endpoints: [],
  });
  const providers = [];
  for (const n of [1, 2]) {
    const provider = await post('/rest/api/service-providers', {
      title: `Reliability SP ${n}`,
      accessPoint: { identifier: accessPoint.identifier },
    });
    const username = `reliability-sp-${n}`;
    const password = `reliability-sp-${n}-password`;
    await post('/rest/api/users', {
      username,
      password,
      role: 'SERVICE_PROVIDER',
      serviceProvider: { identifier: provider.identifier },
    });
    providers.push({ id: provider.identifier, authorization: basic(username, password) });
  }
  return { admin, providers };
}

export async function stopService(service: RunningService, signal: NodeJS.Signals = 'SIGTERM') {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill(signal);
  return service.exited;
}

/** The request ids of the service's log lines with this message. */
export function loggedRequestIds(service: RunningService, msg: string): Set<string> {
  const ids = new Set<string>();
  for (const line of service.output) {
    try {
      const entry = JSON.parse(line) as { msg?: string; reqId?: string };
      if (entry.msg === msg && entry.reqId) ids.add(entry.reqId);
    } catch {
      // not a log line
    }
  }
  return ids;
}
