/**
 * `npm run bench`: builds a data set per selected database (PostgreSQL, embedded), starts the built service on it
 * as in production once per `--workers` value and measures each scenario against the machine's two ceilings
 * (a bare node:http server, pgbench). See README.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { get } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openPostgres } from '../src/db/postgres.js';
import { SmpKeys, type SmpKey } from '../src/smp/keys.js';
import { SIGNING_THREAD_IDLE_MS } from '../src/smp/signing-pool.js';
import { cpuDuring } from './cpu.js';
import type { Dataset } from './dataset.js';
import { drive, type LoadOptions, type Measurement } from './measure.js';
import { MINIMAL_STREAM_SQL, minimalScript } from './minimal.js';
import { timeImport } from './import.js';
import { measureDelivery, primeCursors, startPeers, type DeliveryRun } from './delivery.js';
import { pgbench } from './pgbench.js';
import { pgbenchScript, pgbenchStreamScript, recordingApp } from './record.js';
import { comparedWithBaseline, writeBaseline } from './baseline.js';
import { printTable, writeResults, type ConfigurationReport, type Report, type Result } from './report.js';
import { scenarios, streamRequest, type BenchRequest, type Scenario } from './scenarios.js';
import { benchSmpKey } from './smp.js';
import { crashed, freePort, rssMiB, startProcess, type RunningProcess } from './service.js';
import { DATABASE_KINDS, embeddedStore, postgresStore, type DatabaseKind, type Store } from './stores.js';
import { streamOnce, streamRows } from './stream.js';

const { values: args } = parseArgs({
  options: {
    participants: { type: 'string', default: '1000000' },
    /** The embedded data set's size: PGlite runs one statement at a time, in the service's own process. */
    'embedded-participants': { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    /** Seconds of the same load before each measured run of a scenario, not counted: the measured run sees code already compiled. */
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    scenarios: { type: 'string', default: '1,2a,2b,3,4,5,6,6s,7,8,smp1,smp2,smp3,smp4,smp5,smp6,import' },
    /** The delivery scenario (PostgreSQL): new organizations imported while the service delivers them to stand-ins. */
    'delivery-organizations': { type: 'string', default: '100000' },
    /** The stand-ins' latency (ms) and the calls each takes at once, and the service's SML_CALLS_AT_ONCE, DIRECTORY_CALLS_AT_ONCE and SML_LIST_SIZE. */
    'delivery-latency': { type: 'string', default: '150' },
    'delivery-bound': { type: 'string', default: '64' },
    'delivery-sml-calls-at-once': { type: 'string', default: '4' },
    'delivery-directory-calls-at-once': { type: 'string', default: '16' },
    'delivery-list-size': { type: 'string', default: '100' },
    /** Lines of the import scenario; default a tenth of the data set's participants (100,000 at full scale). */
    'import-lines': { type: 'string' },
    /** The databases to measure, each on a data set of its own: postgres, embedded, or both. */
    database: { type: 'string', default: 'postgres' },
    'database-url': { type: 'string', default: process.env.BENCH_DATABASE_URL },
    replay: { type: 'boolean', default: false },
    'code-lists': { type: 'string', default: join(import.meta.dirname, '../reference-data/peppol-codelists-v9.7') },
    'load-workers': { type: 'string', default: '2' },
    'node-args': { type: 'string', default: '' },
    /** Each run's results, in a directory the repository ignores. */
    out: { type: 'string', default: join(import.meta.dirname, 'out') },
    /** The one run kept in the repository, compared with at the end; `--write-baseline` replaces it with this run. */
    baseline: { type: 'string', default: join(import.meta.dirname, 'baseline.json') },
    'write-baseline': { type: 'boolean', default: false },
    label: { type: 'string', default: '' },
    /** REGISTRY_WORKERS of the service, one configuration per value: `1,2` compares one and two processes. */
    workers: { type: 'string', default: '1' },
    /** PostgreSQL's own cluster: after the primary-only configurations, the same again with a streaming hot standby taking the public reads. */
    standby: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
  },
});

/** `--database postgres,embedded`, checked. */
function databasesOf(list: string): DatabaseKind[] {
  const kinds = list.split(',');
  const unknown = kinds.filter((kind) => !DATABASE_KINDS.includes(kind as DatabaseKind));
  if (unknown.length > 0) throw new Error(`--database: unknown ${unknown.join(', ')} (${DATABASE_KINDS.join(', ')})`);
  return kinds as DatabaseKind[];
}

/** `--workers 1,2`, checked. */
function workerCountsOf(list: string): number[] {
  const counts = list.split(',').map(Number);
  if (counts.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--workers: ${list} is not a list of positive integers`);
  return counts;
}

const options = {
  duration: Number(args.duration),
  warmup: Number(args.warmup),
  connections: Number(args.connections),
  selected: new Set((args.scenarios as string).split(',')),
  databases: databasesOf(args.database as string),
  workerCounts: workerCountsOf(args.workers as string),
};
const log = (message: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);

type Recorder = Awaited<ReturnType<typeof recordingApp>>;

/** The ceilings of one scenario: measured once per data set, with its first configuration. */
interface Ceilings {
  http: Measurement;
  database?: Measurement;
  serviceSql?: Measurement;
  minimalSql?: string;
  sql?: string;
}

/** What one configuration's scenarios run against. */
interface Run {
  store: Store;
  /** The selected scenarios, made once per data set: scenario 6 numbers its participants on across configurations. */
  scenarios: Scenario[];
  service: RunningProcess;
  /** The service's REGISTRY_WORKERS. */
  workers: number;
  ceilingServer: RunningProcess;
  /** Per scenario id, for every configuration of the data set. */
  ceilings: Map<string, Ceilings>;
  recorder?: Recorder;
}

/** Average body size and status of each request of a few draws, so the HTTP ceiling answers the same. */
async function responseShape(url: string, scenario: Scenario) {
  const sizes: number[][] = [];
  const statuses: number[] = [];
  for (let i = 0; i < 20; i += 1) {
    const draw = scenario.draw();
    for (const [index, request] of draw.requests.entries()) {
      const response = await fetch(`${url}${request.path}`, {
        method: request.method,
        headers: request.headers,
        body: request.body,
      });
      const body = await response.arrayBuffer();
      if (response.status >= 400)
        throw new Error(
          `scenario ${scenario.id}: ${request.method} ${request.path} answered ${response.status}: ${Buffer.from(body).toString().slice(0, 300)}`,
        );
      (sizes[index] ??= []).push(body.byteLength);
      statuses[index] = response.status;
    }
  }
  return sizes.map((list, index) => ({
    bytes: Math.round(list.reduce((a, b) => a + b, 0) / list.length),
    status: statuses[index] as number,
  }));
}

/** A GET on a connection of its own (node:cluster hands each new connection to the next worker). */
function getOnNewConnection(url: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    get(url, { headers, agent: false }, (response) => response.resume().on('end', resolve).on('error', reject)).on(
      'error',
      reject,
    );
  });
}

/**
 * Verified credentials are cached for a minute, in each worker; each scenario starts with every user's verified
 * again, so it measures the steady state (and its cache misses within the minute), not 51 scrypt checks at once.
 * With several workers, each user sends one request per worker on new connections in a row: the primary hands
 * connections to the workers in turn, so they reach every worker.
 */
async function warmCredentials(url: string, data: Dataset, workers: number): Promise<void> {
  const users = [...data.providers.map((p) => p.username), data.authority];
  const check = (username: string) =>
    getOnNewConnection(`${url}/rest/api/processes?size=1`, {
      authorization: `Basic ${Buffer.from(`${username}:${data.password}`).toString('base64')}`,
    });
  if (workers === 1) {
    await Promise.all(users.map(check));
    return;
  }
  for (const username of users) for (let worker = 0; worker < workers; worker += 1) await check(username);
}

/** The scenario's ceilings from the data set's first configuration, measured now when there are none yet. */
async function ceilingsOnce(run: Run, id: string, measure: () => Promise<Ceilings>): Promise<Ceilings> {
  const ceilings = run.ceilings.get(id) ?? (await measure());
  run.ceilings.set(id, ceilings);
  return ceilings;
}

async function scenarioCeilings(
  scenario: Scenario,
  shape: Awaited<ReturnType<typeof responseShape>>,
  load: LoadOptions,
  run: Run,
): Promise<Ceilings> {
  const http = await drivenWithCpu(run.ceilingServer.pid, load, (driven) =>
    drive(
      run.ceilingServer.url,
      () => scenario.draw(),
      driven,
      (request: BenchRequest, index: number) => ({
        ...request,
        path: `/size/${shape[index]?.bytes ?? 0}/${shape[index]?.status ?? 200}`,
      }),
    ),
  );
  const { databaseUrl, data } = run.store;
  if (!databaseUrl) return { http };
  const minimal = minimalScript(scenario.id, data);
  if (!minimal) throw new Error(`scenario ${scenario.id} has no minimal database script (bench/minimal.ts)`);
  const pgbenchRun = (script: string) =>
    pgbench({ databaseUrl, script, clients: load.connections, duration: load.duration, mode: 'prepared' });
  const database = await pgbenchRun(minimal);
  if (!run.recorder) return { http, database, minimalSql: minimal };
  const recordedDraw = scenario.draw();
  const recorded = await run.recorder.record(recordedDraw);
  // A request answered from the service's memory sends no SQL: there is nothing to replay.
  if (recorded.statements.length === 0) return { http, database, minimalSql: minimal };
  const sql = pgbenchScript(scenario.pgbenchVariables, recorded.statements, recordedDraw.bindings);
  return { http, database, minimalSql: minimal, serviceSql: await pgbenchRun(sql), sql };
}

/** A measurement after the warm-up, with the CPU each part spent per unit meanwhile. */
async function drivenWithCpu(
  serverPid: number,
  load: LoadOptions,
  measure: (load: LoadOptions) => Promise<Measurement>,
): Promise<Measurement> {
  if (options.warmup > 0) await measure({ ...load, duration: options.warmup });
  const { result, cpu } = await cpuDuring(
    serverPid,
    () => measure(load),
    (measured) => measured.perSecond * load.duration,
  );
  return { ...result, cpu };
}

async function measureScenario(scenario: Scenario, run: Run): Promise<Result> {
  const {
    service,
    store: { data },
  } = run;
  log(`scenario ${scenario.id}: ${scenario.title}`);
  await warmCredentials(service.url, data, run.workers);
  const shape = await responseShape(service.url, scenario);
  const connections = scenario.connections ?? options.connections;
  const load = { connections, duration: options.duration };
  const measured = await drivenWithCpu(service.pid, load, (driven) =>
    drive(service.url, () => scenario.draw(), driven),
  );
  if (crashed(service)) throw new Error(`the service crashed during scenario ${scenario.id}`);
  const ceilings = await ceilingsOnce(run, scenario.id, () => scenarioCeilings(scenario, shape, load, run));
  return resultOf(scenario.id, scenario.title, scenario.unit, measured, ceilings, {
    responseBytes: shape.map((s) => s.bytes),
    connections,
  });
}

function resultOf(
  id: string,
  title: string,
  unit: string,
  service: Measurement,
  ceilings: Ceilings,
  extra: Record<string, unknown>,
): Result {
  const { http, database } = ceilings;
  const httpRatio = service.perSecond / http.perSecond;
  if (!database) return { id, title, unit, service, ...ceilings, httpRatio, ...extra };
  const lower = http.perSecond <= database.perSecond ? 'http' : 'database';
  const ratio = service.perSecond / Math.min(http.perSecond, database.perSecond);
  return { id, title, unit, service, ...ceilings, lowerCeiling: lower, ratio, httpRatio, ...extra };
}

/** The participants the service holds now, by its own count: scenario 6 may have ended between an add and its delete. */
async function participantTotal(url: string, data: Dataset): Promise<number> {
  const { headers } = streamRequest(data);
  const response = await fetch(`${url}/rest/api/participants?size=1`, {
    headers: { ...headers, accept: 'application/json' },
  });
  if (response.status !== 200) throw new Error(`counting the participants answered ${response.status}`);
  return ((await response.json()) as { totalElements: number }).totalElements;
}

/** A single stream as a measurement: rows per second, its time as both latencies. */
const streamMeasurement = (rows: number, ms: number, errors: number): Measurement => ({
  perSecond: rows / (ms / 1000),
  p50: ms,
  p99: ms,
  errors,
  count: 1,
});

async function streamCeilings(run: Run, rows: number, bytes: number): Promise<Ceilings> {
  const http = await streamOnce(`${run.ceilingServer.url}/stream/${bytes}`, {});
  const { databaseUrl } = run.store;
  if (!databaseUrl) return { http: streamMeasurement(rows, http.ms, 0) };
  const pgbenchOnce = (script: string) =>
    pgbench({ databaseUrl, script, clients: 1, duration: 0, transactions: 1, mode: 'extended' });
  const asRows = (measured: Measurement) => streamMeasurement(rows, measured.p50, measured.errors);
  const database = asRows(
    await pgbenchOnce(pgbenchStreamScript({ sql: MINIMAL_STREAM_SQL, params: [], batchSize: 1000 }, rows)),
  );
  const ceilings = { http: streamMeasurement(rows, http.ms, 0), database, minimalSql: MINIMAL_STREAM_SQL };
  if (!run.recorder) return ceilings;
  const stream = (await run.recorder.record({ requests: [streamRequest(run.store.data)], bindings: [] })).streams[0];
  if (!stream) throw new Error('the stream request ran no cursor');
  return { ...ceilings, serviceSql: asRows(await pgbenchOnce(pgbenchStreamScript(stream, rows))) };
}

async function measureStream(run: Run): Promise<Result> {
  const {
    service,
    store: { data },
  } = run;
  log('scenario 8: stream every participant (AUT)');
  await warmCredentials(service.url, data, run.workers);
  const expected = await participantTotal(service.url, data);
  const restMiB = rssMiB(service.pid);
  const streamed = await streamRows(service, data);
  if (crashed(service)) throw new Error('the service crashed during the stream');
  if (streamed.rows !== expected) throw new Error(`the stream returned ${streamed.rows} participants, not ${expected}`);
  const ceilings = await ceilingsOnce(run, '8', () => streamCeilings(run, expected, streamed.bytes));
  return resultOf(
    '8',
    'stream every participant (AUT), rows/s',
    'rows',
    streamMeasurement(expected, streamed.ms, streamed.errors),
    ceilings,
    {
      responseBytes: [streamed.bytes],
      memory: { restMiB, peakMiB: streamed.peakMiB, growthMiB: streamed.peakMiB - restMiB },
    },
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Node's flags for the service as `npm start` and the README's production command give them (`--node-args` come after). */
const SERVICE_NODE_ARGS = ['--max-semi-space-size=16'];

async function startService(
  store: Store,
  workers: number,
  label: string,
  smpEnv: Record<string, string>,
): Promise<RunningProcess & { managementUrl: string }> {
  const managementPort = await freePort();
  const port = await freePort();
  const serviceLog = join(tmpdir(), `registry-bench-${stamp}-${label.replace(/\W+/g, '-')}-service.log`);
  const service = await startProcess(
    [...SERVICE_NODE_ARGS, ...(args['node-args'] as string).split(' ').filter(Boolean), 'dist/server.js'],
    {
      ...process.env,
      ...store.data.databaseEnv,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
      REGISTRY_WORKERS: String(workers),
      REGISTRY_DEMO: 'false',
      REGISTRY_ADMIN_PASSWORD: store.data.password,
      // Every user of the load signs in from this one address: their checks (the warm-up's, a minute's cache misses)
      // must not meet the per-address bound meant for one client.
      SIGN_IN_CHECKS_PER_ADDRESS: '1000',
      MANAGEMENT_PORT: String(managementPort),
      ...smpEnv,
    },
    port,
    serviceLog,
    '/rest/api/processes',
  );
  log(`${label}: service pid ${service.pid} on ${service.url}, log ${serviceLog}`);
  return { ...service, managementUrl: `http://127.0.0.1:${managementPort}` };
}

/** The queries the standby answered, by the service's metrics (`db_standby_reads_total`; one worker's with several). */
async function standbyReads(service: { managementUrl: string }): Promise<number> {
  const metrics = await (await fetch(`${service.managementUrl}/metrics`)).text();
  return [...metrics.matchAll(/^db_standby_reads_total\{[^}]*\} (\d+)/gm)].reduce(
    (total, match) => total + Number(match[1]),
    0,
  );
}

/**
 * Waits until the service's participant search in memory has loaded (unless PARTICIPANT_SEARCH_IN_MEMORY=false):
 * the database answers searches until then, and a scenario measured meanwhile would measure that.
 */
async function searchIndexLoaded(service: { managementUrl: string; pid: number }, label: string): Promise<void> {
  if (process.env.PARTICIPANT_SEARCH_IN_MEMORY === 'false') return;
  const startedAt = Date.now();
  for (;;) {
    const metrics = await (await fetch(`${service.managementUrl}/metrics`)).text();
    if (/^participant_search_memory_ready 1$/m.test(metrics)) break;
    if (Date.now() - startedAt > 600_000)
      throw new Error(`${label}: the participant search in memory did not load within 10 minutes`);
    await sleep(250);
  }
  log(
    `${label}: participant search in memory loaded in ${((Date.now() - startedAt) / 1000).toFixed(1)} s after the service answered; resident ${rssMiB(service.pid).toFixed(0)} MiB`,
  );
}

/**
 * Every selected scenario against the service started on the store with REGISTRY_WORKERS=`workers`; with `standbyUrl`,
 * its standby routes read from that streaming hot standby (DATABASE_READ_URLS).
 */
async function measureConfiguration(
  run: Omit<Run, 'service' | 'workers'>,
  workers: number,
  smpEnv: Record<string, string>,
  standbyUrl?: string,
): Promise<ConfigurationReport> {
  const label = `${run.store.kind} ×${workers}${standbyUrl ? ' +standby' : ''}`;
  const service = await startService(run.store, workers, label, {
    ...smpEnv,
    ...(standbyUrl ? { DATABASE_READ_URLS: standbyUrl } : {}),
  });
  try {
    const withService = { ...run, service, workers };
    await searchIndexLoaded(service, label);
    await sleep(2000);
    const restAtStartMiB = rssMiB(service.pid);
    const results: Result[] = [];
    for (const scenario of run.scenarios) {
      results.push(await measureScenario(scenario, withService));
    }
    if (options.selected.has('8')) results.push(await measureStream(withService));
    await sleep(3000);
    const restAtEndMiB = rssMiB(service.pid);
    // What the process keeps for good: the signing threads end once idle for their time.
    await sleep(SIGNING_THREAD_IDLE_MS);
    const memory = { restAtStartMiB, restAtEndMiB, restAfterIdleMiB: rssMiB(service.pid) };
    const standby = standbyUrl ? { reads: await standbyReads(service) } : undefined;
    return {
      label,
      database: run.store.kind,
      workers,
      participants: run.store.data.participants,
      memory,
      results,
      standby,
    };
  } finally {
    await service.stop();
  }
}

/** The in-process application that records the service's SQL for `--replay` (PostgreSQL only). */
async function recorderOf(store: Store, key: SmpKey): Promise<{ recorder?: Recorder; close(): Promise<void> }> {
  if (!args.replay || !store.databaseUrl) return { close: async () => {} };
  const db = openPostgres({ connectionString: store.databaseUrl, maxConnections: 2 });
  const recorder = await recordingApp(db, { keys: new SmpKeys(key) });
  return {
    recorder,
    close: async () => {
      await recorder.close();
      await db.close();
    },
  };
}

async function openStore(kind: DatabaseKind): Promise<Store> {
  const common = { codeListDir: args['code-lists'] as string, log, keep: args.keep as boolean };
  if (kind === 'embedded') return embeddedStore({ ...common, participants: Number(args['embedded-participants']) });
  return postgresStore({
    ...common,
    participants: Number(args.participants),
    databaseUrl: args['database-url'],
    loadWorkers: Number(args['load-workers']),
  });
}

/** One database: its data set, every worker configuration on it, then the import (which needs no service). */
async function measureDatabase(
  kind: DatabaseKind,
  report: Report,
  ceilingServer: RunningProcess,
  smp: Awaited<ReturnType<typeof benchSmpKey>>,
): Promise<void> {
  const store = await openStore(kind);
  const { recorder, close } = await recorderOf(store, smp.key);
  try {
    log(`${kind}: data set built in ${store.data.buildSeconds.toFixed(1)} s: ${JSON.stringify(store.data.steps)}`);
    const selected = scenarios(store.data).filter((s) => options.selected.has(s.id));
    const run = { store, scenarios: selected, ceilingServer, ceilings: new Map<string, Ceilings>(), recorder };
    // Only the delivery (or the import) selected: no configuration to measure the scenarios in.
    const measured = selected.length > 0 || options.selected.has('8') ? options.workerCounts : [];
    for (const workers of measured) {
      if (kind === 'embedded' && workers > 1) {
        report.skipped.push(
          `embedded ×${workers} not measured: REGISTRY_WORKERS>1 needs PostgreSQL (the embedded database belongs to one process; the service refuses it).`,
        );
        continue;
      }
      report.configurations.push(await measureConfiguration(run, workers, smp.env));
    }
    if (args.standby) await measureWithStandby(run, report, smp.env);
    const delivery = options.selected.has('delivery') ? await measureDeliveryOn(store, report, smp.env) : undefined;
    // Last, with the service stopped (on the embedded database it owns the data directory).
    const imported = options.selected.has('import')
      ? await timeImport(
          { ...store.data, database: store.data.databaseEnv },
          Number(args['import-lines'] ?? Math.ceil(store.data.participants / 10)),
          log,
        )
      : undefined;
    const { participants, buildSeconds, steps } = store.data;
    report.datasets.push({ database: kind, participants, ...store.server, buildSeconds, steps, imported, delivery });
  } finally {
    await close();
    await store.remove();
  }
}

/**
 * The delivery scenario on PostgreSQL (the import runs beside the service, which the embedded database does not allow):
 * the service started with the stand-ins as its SML and Directory, the cursors at the log's end.
 */
async function measureDeliveryOn(
  store: Store,
  report: Report,
  smpEnv: Record<string, string>,
): Promise<DeliveryRun | undefined> {
  const databaseUrl = store.data.databaseEnv.DATABASE_URL;
  if (store.kind !== 'postgres' || databaseUrl === undefined) {
    report.skipped.push(
      `${store.kind}: no delivery scenario: its import runs beside the service, which the embedded database does not allow.`,
    );
    return undefined;
  }
  const deliveryOptions = {
    organizations: Number(args['delivery-organizations']),
    pace: { latencyMs: Number(args['delivery-latency']), maxInFlight: Number(args['delivery-bound']) },
    callsAtOnce: {
      sml: Number(args['delivery-sml-calls-at-once']),
      directory: Number(args['delivery-directory-calls-at-once']),
    },
    listSize: Number(args['delivery-list-size']),
    limitSeconds: 3600,
  };
  const peers = await startPeers(deliveryOptions);
  try {
    await primeCursors(databaseUrl);
    const service = await startService(store, 1, `${store.kind} delivery`, { ...smpEnv, ...peers.env });
    try {
      log(
        `${store.kind}: delivery of ${deliveryOptions.organizations} new organizations to stand-ins at ${deliveryOptions.pace.latencyMs} ms`,
      );
      return await measureDelivery(service.url, store.data, peers, deliveryOptions, log);
    } finally {
      await service.stop();
    }
  } finally {
    await peers.close();
  }
}

/** `--standby`: every worker configuration again, the public reads on a streaming hot standby made now (after them). */
async function measureWithStandby(
  run: Omit<Run, 'service' | 'workers'>,
  report: Report,
  smpEnv: Record<string, string>,
): Promise<void> {
  if (!run.store.addStandby) {
    report.skipped.push(
      `${run.store.kind}: no standby configuration: --standby needs the benchmark's own PostgreSQL cluster (not --database-url, not the embedded database).`,
    );
    return;
  }
  log(`${run.store.kind}: starting a streaming hot standby (pg_basebackup of the data set)`);
  const standbyUrl = await run.store.addStandby();
  for (const workers of options.workerCounts)
    report.configurations.push(await measureConfiguration(run, workers, smpEnv, standbyUrl));
}

function replayNote(): string[] {
  return args.replay && options.databases.includes('embedded')
    ? ['No service-SQL replay on the embedded database: pgbench cannot reach it.']
    : [];
}

/** Any error response, socket error, timeout or failed import, said on standard error. */
function failures(report: Report): boolean {
  const errors = report.configurations.flatMap((c) =>
    c.results.filter((r) => r.service.errors > 0).map((r) => `${r.id} (${c.label})`),
  );
  if (errors.length > 0)
    console.error(
      `errors (non-2xx, socket errors or timeouts) in scenario(s) ${errors.join(', ')}; see the service logs in ${tmpdir()}`,
    );
  const failedImports = report.datasets.filter((d) => d.imported && d.imported.exitCode !== 0);
  if (failedImports.length > 0)
    console.error(
      `the import failed on ${failedImports.map((d) => d.database).join(', ')} (its standard error is above)`,
    );
  return errors.length > 0 || failedImports.length > 0;
}

async function main() {
  const started = Date.now();
  if (!args['no-build']) execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  const smp = await benchSmpKey();
  const ceilingPort = await freePort();
  const ceilingServer = await startProcess(
    ['--import', 'tsx', join(import.meta.dirname, 'http-ceiling.ts')],
    { ...process.env, PORT: String(ceilingPort) },
    ceilingPort,
    join(tmpdir(), `registry-bench-${stamp}-ceiling.log`),
    '/size/0',
  );
  const report: Report = {
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    date: new Date().toISOString(),
    label: args.label,
    machine: { cpus: cpus().length, node: process.version },
    duration: options.duration,
    connections: options.connections,
    datasets: [],
    configurations: [],
    skipped: replayNote(),
    totalSeconds: 0,
  };
  try {
    for (const kind of options.databases) await measureDatabase(kind, report, ceilingServer, smp);
  } finally {
    await ceilingServer.stop();
  }
  report.totalSeconds = (Date.now() - started) / 1000;
  printTable(report);
  log(`written ${writeResults(report, args.out as string, stamp).join(', ')}`);
  for (const line of comparedWithBaseline(report, args.baseline as string)) log(line);
  if (args['write-baseline']) {
    writeBaseline(report, args.baseline as string);
    log(`baseline ${args.baseline as string} replaced by this run`);
  }
  if (failures(report)) process.exitCode = 1;
}

mkdirSync(args.out as string, { recursive: true });
await main();
