/**
 * What one request costs: requests per second and latency of `GET /rest/api/processes/{identifier}`,
 * anonymous and authenticated, against the application listening on a loopback port, on the embedded
 * PostgreSQL (a fresh data directory) and on a PostgreSQL server (a fresh database, dropped afterwards).
 *
 *   npm run request-cost [-- --duration 5 --connections 10 --only embedded|postgres]
 *
 * REQUEST_COST_DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/test); the
 * script creates and drops a database of its own there.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { buildApp } from '../src/app.js';
import type { Database } from '../src/db/database.js';
import { openDatabase } from '../src/db/open.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { Role } from '../src/http/auth.js';
import { insertUser } from '../src/users/repository.js';

const { values: options } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    only: { type: 'string' },
  },
});
const duration = Number(options.duration);
const connections = Number(options.connections);
const serverUrl = process.env.REQUEST_COST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const USERNAME = 'request-cost-admin';
const PASSWORD = randomBytes(12).toString('base64url');
const AUTHORIZATION = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64')}`;

interface Target {
  name: string;
  open(): Promise<{ db: Database; dispose(): Promise<void> }>;
}

const embedded: Target = {
  name: 'embedded (PGlite)',
  async open() {
    const dataDir = await mkdtemp(join(tmpdir(), 'registry-request-cost-'));
    const db = await openDatabase({ REGISTRY_DATA_DIR: dataDir });
    return { db, dispose: () => rm(dataDir, { recursive: true, force: true }) };
  },
};

const postgres: Target = {
  name: 'PostgreSQL',
  async open() {
    const name = `request_cost_${randomBytes(4).toString('hex')}`;
    const server = openPostgres({ connectionString: serverUrl, maxConnections: 1 });
    await server.query(`CREATE DATABASE ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    // A small pool: the machine's PostgreSQL is shared.
    const db = openPostgres({ connectionString: url.toString(), maxConnections: 8 });
    await migrate(db);
    return {
      db,
      async dispose() {
        await server.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await server.close();
      },
    };
  },
};

/** A process with every relation filled, so that the response is a realistic one. */
async function seed(app: Awaited<ReturnType<typeof buildApp>>, db: Database): Promise<string> {
  await insertUser(db, { username: USERNAME, password: PASSWORD, role: Role.admin });
  const [capability] = await db.query<{ id: string }>(
    `INSERT INTO capabilities (title) VALUES ('Receive') RETURNING id`,
  );
  const add = async (url: string, payload: Record<string, unknown>) => {
    const response = await app.inject({ method: 'POST', url, payload, headers: { authorization: AUTHORIZATION } });
    if (response.statusCode !== 201) throw new Error(`seeding ${url}: ${response.statusCode} ${response.body}`);
    return response.json<{ identifier: string }>().identifier;
  };
  const documentTypes: string[] = [];
  for (const value of ['invoice', 'credit-note']) {
    documentTypes.push(
      await add('/rest/api/document-types', {
        title: value,
        qualifiedIdentifier: `busdox-docid-qns::urn:request-cost:${value}`,
        visible: true,
        processes: [],
      }),
    );
  }
  const form = (value: string, dependencies: string[]) => ({
    domain: 'billing',
    title: `Billing ${value}`,
    alias: value,
    qualifiedIdentifier: `cenbii-procid-ubl::urn:request-cost:${value}`,
    restricted: false,
    visible: true,
    requiredICDs: ['0192', '0007'],
    capabilities: [{ identifier: capability?.id }],
    documentTypes: documentTypes.map((identifier) => ({ identifier })),
    dependencies: dependencies.map((identifier) => ({ identifier })),
  });
  const base = await add('/rest/api/processes', form('base', []));
  return add('/rest/api/processes', form('measured', [base]));
}

interface Measurement {
  database: string;
  request: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

async function measure(url: string, headers: Record<string, string>, seconds: number) {
  const result = await autocannon({ url, headers, connections, duration: seconds });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.errors + result.timeouts + result.non2xx,
  };
}

async function run(target: Target): Promise<Measurement[]> {
  const { db, dispose } = await target.open();
  const app = await buildApp({ db });
  try {
    const identifier = await seed(app, db);
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const url = `${address}/rest/api/processes/${identifier}`;
    const requests = [
      ['anonymous GET /processes/{id}', {}],
      ['authenticated GET /processes/{id}', { authorization: AUTHORIZATION }],
    ] as const;
    const measurements: Measurement[] = [];
    for (const [request, headers] of requests) {
      await measure(url, headers, 1); // warm-up: JIT, pool, credential cache
      measurements.push({ database: target.name, request, ...(await measure(url, headers, duration)) });
    }
    return measurements;
  } finally {
    await app.close();
    await db.close();
    await dispose();
  }
}

const targets = [embedded, postgres].filter(
  (target) => !options.only || target.name.toLowerCase().startsWith(options.only),
);
const rows: Measurement[] = [];
for (const target of targets) rows.push(...(await run(target)));

console.log(`\n${connections} connections, ${duration} s per request kind, Node ${process.version}\n`);
console.log('| database | request | requests/s | p50 ms | p99 ms | failures |');
console.log('|---|---|---:|---:|---:|---:|');
for (const row of rows) {
  console.log(
    `| ${row.database} | ${row.request} | ${Math.round(row.requestsPerSecond)} | ${row.p50} | ${row.p99} | ${row.failures} |`,
  );
}
if (rows.some((row) => row.failures > 0)) process.exitCode = 1;
