/**
 * `npm run bench`: builds a data set in a fresh database, starts the built service as in production and
 * measures each scenario against the machine's two ceilings (a bare node:http server, pgbench). See README.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Database } from '../src/db/database.js';
import { openPostgres } from '../src/db/postgres.js';
import { startCluster, type Cluster } from './cluster.js';
import { buildDataset, dropDatabase, type Dataset } from './dataset.js';
import { drive, type Measurement } from './measure.js';
import { MINIMAL_STREAM_SQL, minimalScript } from './minimal.js';
import { timeImport } from './import.js';
import { pgbench } from './pgbench.js';
import { pgbenchScript, pgbenchStreamScript, recordingApp } from './record.js';
import { printTable, writeResults, type Result } from './report.js';
import { scenarios, type BenchRequest, type Scenario } from './scenarios.js';
import { benchSmpKey } from './smp.js';
import { crashed, freePort, rssMiB, startProcess, type RunningProcess } from './service.js';
import { streamOnce, streamRows } from './stream.js';

const { values: args } = parseArgs({
  options: {
    participants: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    scenarios: { type: 'string', default: '1,2a,2b,3,4,5,6,6s,7,8,smp1,smp2,smp3,smp4,import' },
    /** Lines of the import scenario; default a tenth of the participants (100,000 at full scale). */
    'import-lines': { type: 'string' },
    'database-url': { type: 'string', default: process.env.BENCH_DATABASE_URL },
    replay: { type: 'boolean', default: false },
    'code-lists': { type: 'string', default: join(import.meta.dirname, '../reference-data/peppol-codelists-v9.7') },
    'load-workers': { type: 'string', default: '2' },
    'node-args': { type: 'string', default: '' },
    out: { type: 'string', default: join(import.meta.dirname, 'results') },
    label: { type: 'string', default: '' },
    /** REGISTRY_WORKERS of the service: run once with 1 and once with 2 to compare. */
    workers: { type: 'string', default: '1' },
    keep: { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
  },
});

const options = {
  participants: Number(args.participants),
  duration: Number(args.duration),
  connections: Number(args.connections),
  selected: new Set((args.scenarios as string).split(',')),
};
const log = (message: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
const serviceLog = join(tmpdir(), `registry-bench-${stamp}-service.log`);

/** Average body size and status of each request of a few draws, so the HTTP ceiling answers the same. */
async function responseShape(url: string, scenario: Scenario) {
  const sizes: number[][] = [];
  const statuses: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const draw = scenario.draw();
    for (const [index, request] of draw.requests.entries()) {
      const response = await fetch(`${url}${request.path}`, { method: request.method, headers: request.headers, body: request.body });
      const body = await response.arrayBuffer();
      if (response.status >= 300) throw new Error(`scenario ${scenario.id}: ${request.method} ${request.path} answered ${response.status}: ${Buffer.from(body).toString().slice(0, 300)}`);
      (sizes[index] ??= []).push(body.byteLength);
      statuses[index] = response.status;
    }
  }
  return sizes.map((list, index) => ({
    bytes: Math.round(list.reduce((a, b) => a + b, 0) / list.length),
    status: statuses[index] as number,
  }));
}

/**
 * Verified credentials are cached for a minute; each scenario starts with every user's verified again, so it
 * measures the steady state (and its cache misses within the minute), not 51 scrypt checks at once.
 */
async function warmCredentials(url: string, data: Dataset): Promise<void> {
  const users = [...data.providers.map((p) => p.username), data.authority];
  await Promise.all(users.map((username) => fetch(`${url}/rest/api/processes?size=1`, {
    headers: { authorization: `Basic ${Buffer.from(`${username}:${data.password}`).toString('base64')}` },
  }).then((response) => response.arrayBuffer())));
}

async function measureScenario(scenario: Scenario, service: RunningProcess, ceiling: RunningProcess, recorder: Awaited<ReturnType<typeof recordingApp>>, data: Dataset): Promise<Result> {
  log(`scenario ${scenario.id}: ${scenario.title}`);
  await warmCredentials(service.url, data);
  const shape = await responseShape(service.url, scenario);
  const connections = scenario.connections ?? options.connections;
  const load = { connections, duration: options.duration };
  const measured = await drive(service.url, () => scenario.draw(), load);
  if (crashed(service)) throw new Error(`the service crashed during scenario ${scenario.id}`);
  const http = await drive(ceiling.url, () => scenario.draw(), load, (request: BenchRequest, index: number) => ({
    ...request, path: `/size/${shape[index]?.bytes ?? 0}/${shape[index]?.status ?? 200}`,
  }));
  const minimal = minimalScript(scenario.id, data);
  if (!minimal) throw new Error(`scenario ${scenario.id} has no minimal database script (bench/minimal.ts)`);
  const pgbenchRun = (script: string) => pgbench({ databaseUrl: data.databaseUrl, script, clients: connections, duration: options.duration, mode: 'prepared' });
  const database = await pgbenchRun(minimal);
  let replayed: { serviceSql: Measurement; sql: string } | undefined;
  if (args.replay) {
    const recordedDraw = scenario.draw();
    const recorded = await recorder.record(recordedDraw);
    // A request answered from the service's memory sends no SQL: there is nothing to replay.
    if (recorded.statements.length > 0) {
      const sql = pgbenchScript(scenario.pgbenchVariables, recorded.statements, recordedDraw.bindings);
      replayed = { serviceSql: await pgbenchRun(sql), sql };
    }
  }
  return resultOf(scenario.id, scenario.title, scenario.unit, measured, http, database, { responseBytes: shape.map((s) => s.bytes), minimalSql: minimal, connections, ...replayed });
}

function resultOf(id: string, title: string, unit: string, service: Measurement, http: Measurement, database: Measurement, extra: Record<string, unknown>): Result {
  const lower = http.perSecond <= database.perSecond ? 'http' : 'database';
  const ceiling = Math.min(http.perSecond, database.perSecond);
  return { id, title, unit, service, http, database, lowerCeiling: lower, ratio: service.perSecond / ceiling, httpRatio: service.perSecond / http.perSecond, ...extra };
}

async function measureStream(service: RunningProcess, ceiling: RunningProcess, recorder: Awaited<ReturnType<typeof recordingApp>>, data: Dataset, db: Database): Promise<Result> {
  log('scenario 8: stream every participant (AUT)');
  await warmCredentials(service.url, data);
  // Scenario 6 may end between an add and its delete; what it left behind goes first.
  await db.query(`DELETE FROM participants WHERE icd = '0192' AND organization_identifier LIKE '9_________'`);
  const restMiB = rssMiB(service.pid);
  const rowsPerSecond = (ms: number) => data.participants / (ms / 1000);
  const as = (ms: number, errors: number): Measurement => ({ perSecond: rowsPerSecond(ms), p50: ms, p99: ms, errors, count: 1 });
  const run = await streamRows(service, data);
  if (crashed(service)) throw new Error('the service crashed during the stream');
  if (run.rows !== data.participants) throw new Error(`the stream returned ${run.rows} participants, not ${data.participants}`);
  const http = await streamOnce(`${ceiling.url}/stream/${run.bytes}`, {});
  const streamScript = (sql: string, batchSize: number) => pgbenchStreamScript({ sql, params: [], batchSize }, data.participants);
  const pgbenchOnce = (script: string) => pgbench({ databaseUrl: data.databaseUrl, script, clients: 1, duration: 0, transactions: 1, mode: 'extended' });
  const database = await pgbenchOnce(streamScript(MINIMAL_STREAM_SQL, 1000));
  let serviceSql: Measurement | undefined;
  if (args.replay) {
    const stream = (await recorder.record(streamDraw(data))).streams[0];
    if (!stream) throw new Error('the stream request ran no cursor');
    const replayed = await pgbenchOnce(pgbenchStreamScript(stream, data.participants));
    serviceSql = as(replayed.p50, replayed.errors);
  }
  return resultOf('8', 'stream every participant (AUT), rows/s', 'rows', as(run.ms, run.errors), as(http.ms, 0), as(database.p50, database.errors), {
    responseBytes: [run.bytes], minimalSql: MINIMAL_STREAM_SQL, ...(serviceSql ? { serviceSql } : {}),
    memory: { restMiB, peakMiB: run.peakMiB, growthMiB: run.peakMiB - restMiB },
  });
}

function streamDraw(data: Dataset) {
  return { requests: [{ method: 'GET' as const, path: '/rest/api/participants', headers: { accept: 'application/vnd.registry.participants.stream.v1+json', authorization: `Basic ${Buffer.from(`${data.authority}:${data.password}`).toString('base64')}` } }], bindings: [] };
}

/** The server the data set goes to: `--database-url`'s, else a cluster of the benchmark's own. */
async function databaseServer(): Promise<{ adminUrl: string; cluster?: Cluster }> {
  if (args['database-url']) return { adminUrl: args['database-url'] };
  const cluster = startCluster(options.participants, await freePort());
  process.once('SIGINT', () => {
    cluster.stop();
    process.exit(130);
  });
  log(`own PostgreSQL ${cluster.version} cluster: ${JSON.stringify(cluster.settings)}`);
  return { adminUrl: cluster.adminUrl, cluster };
}

async function main() {
  const started = Date.now();
  const { adminUrl, cluster } = await databaseServer();
  try {
    await measureAll(started, adminUrl, cluster);
  } finally {
    cluster?.stop();
  }
}

async function measureAll(started: number, adminUrl: string, cluster: Cluster | undefined) {
  log(`building ${options.participants} participants`);
  const data = await buildDataset({
    adminUrl, participants: options.participants, workers: Number(args['load-workers']),
    codeListDir: args['code-lists'] as string, log,
  });
  log(`data set built in ${data.buildSeconds.toFixed(1)} s: ${JSON.stringify(data.steps)}`);
  let service: RunningProcess | undefined;
  let ceiling: RunningProcess | undefined;
  let db: Database | undefined;
  let failed = false;
  try {
    if (!args['no-build']) execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
    const smp = await benchSmpKey();
    const port = await freePort();
    service = await startProcess([...(args['node-args'] as string).split(' ').filter(Boolean), 'dist/server.js'], {
      ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: data.databaseUrl, LOG_LEVEL: 'info',
      NODE_ENV: 'production', REGISTRY_WORKERS: args.workers as string, REGISTRY_ADMIN_PASSWORD: data.password, MANAGEMENT_PORT: String(await freePort()), ...smp.env,
    }, port, serviceLog, '/rest/api/processes');
    const ceilingPort = await freePort();
    ceiling = await startProcess(['--import', 'tsx', join(import.meta.dirname, 'http-ceiling.ts')], { ...process.env, PORT: String(ceilingPort) }, ceilingPort, join(tmpdir(), `registry-bench-${stamp}-ceiling.log`), '/size/0');
    log(`service pid ${service.pid} on ${service.url}, log ${serviceLog}`);
    db = openPostgres({ connectionString: data.databaseUrl, maxConnections: 2 });
    const recorder = await recordingApp(db, { key: smp.key });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const restAtStartMiB = rssMiB(service.pid);
    const results: Result[] = [];
    for (const scenario of scenarios(data).filter((s) => options.selected.has(s.id))) {
      results.push(await measureScenario(scenario, service, ceiling, recorder, data));
    }
    if (options.selected.has('8')) results.push(await measureStream(service, ceiling, recorder, data, db));
    // Last: the stream above counts exactly the data set's participants.
    const imported = options.selected.has('import')
      ? await timeImport({ ...data, database: { DATABASE_URL: data.databaseUrl } }, Number(args['import-lines'] ?? Math.ceil(options.participants / 10)), log) : undefined;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const restAtEndMiB = rssMiB(service.pid);
    await recorder.close();
    const report = {
      command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
      date: new Date().toISOString(),
      label: args.label,
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
      participants: options.participants, duration: options.duration, connections: options.connections, workers: Number(args.workers), imported,
      database: cluster ? { server: `own cluster, PostgreSQL ${cluster.version}`, settings: cluster.settings } : { server: adminUrl.replace(/\/\/[^@]*@/, '//') },
      dataset: { buildSeconds: data.buildSeconds, steps: data.steps },
      memory: { restAtStartMiB, restAtEndMiB },
      results,
      totalSeconds: (Date.now() - started) / 1000,
    };
    printTable(report);
    const files = writeResults(report, args.out as string, stamp);
    log(`written ${files.join(', ')}`);
    const errors = results.filter((r) => r.service.errors > 0);
    if (errors.length > 0) {
      failed = true;
      console.error(`errors (non-2xx, socket errors or timeouts) in scenario(s) ${errors.map((r) => r.id).join(', ')}; see ${serviceLog}`);
    }
    if (imported && imported.exitCode !== 0) {
      failed = true;
      console.error('the import scenario failed (its standard error is above)');
    }
  } finally {
    await db?.close();
    await service?.stop();
    await ceiling?.stop();
    if (!args.keep || cluster) await dropDatabase(adminUrl, data.databaseName);
    else log(`kept database ${data.databaseName}`);
  }
  if (failed) process.exitCode = 1;
}

mkdirSync(args.out as string, { recursive: true });
await main();
