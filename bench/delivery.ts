/**
 * The `delivery` scenario: K new organizations imported (`registry import-participants`, one commit per batch) into
 * a registry already holding the data set's participants, while the service delivers them to a local SML and
 * Directory that answer at a network's pace (a latency, a bound on calls taken at once); meanwhile a trickle of
 * single registrations through the API. Measured: organizations a second reaching each peer, the time until all are
 * in, the trickle's latency from commit to the SML (p99), and the stand-ins' own ceiling with the same pace (the calls
 * a second a bare client achieves against them at the registry's calls at once).
 */
import { startLocalDirectory } from '../dev/local-directory.js';
import { startLocalSml, type LocalSml } from '../dev/local-sml.js';
import type { Pace } from '../dev/local-server.js';
import { openPostgres } from '../src/db/postgres.js';
import { directoryClient } from '../src/network/directory-client.js';
import { smlClient } from '../src/network/sml-client.js';
import type { Dataset } from './dataset.js';
import { timeImport } from './import.js';
import { norwegianNumberOf } from './keys.js';

export interface DeliveryRun {
  organizations: number;
  latencyMs: number;
  maxInFlight: number;
  callsAtOnce: CallsAtOnce;
  listSize: number;
  importSeconds: number;
  /** From the import's start until every organization was in the SML, and in the Directory. */
  smlSeconds: number;
  directorySeconds: number;
  smlPerSecond: number;
  directoryPerSecond: number;
  /** Single registrations made during the bulk: how many, and their commit-to-SML latency. */
  trickle: { count: number; p50Ms: number; p99Ms: number; maxMs: number };
  /** The stand-ins' ceiling at the same pace and as many callers as the service's: CreateLists of `listSize`, and Directory PUTs. */
  ceiling: { smlListCallsPerSecond: number; smlOrganizationsPerSecond: number; directoryCallsPerSecond: number };
  complete: boolean;
}

/** The service's SML_CALLS_AT_ONCE and DIRECTORY_CALLS_AT_ONCE. */
export interface CallsAtOnce {
  sml: number;
  directory: number;
}

export interface DeliveryOptions {
  organizations: number;
  pace: Required<Pace>;
  callsAtOnce: CallsAtOnce;
  listSize: number;
  /** How long to wait for the deliveries at most after the import, seconds. */
  limitSeconds: number;
}

const SMP_ID = 'bench-smp';
/** The bulk's and the trickle's organization numbers: first digits no other part of the benchmark uses. */
const bulkNumber = (i: number) => norwegianNumberOf(i, 6, 1);
const trickleNumber = (i: number) => norwegianNumberOf(i, 5, 4);
const qualified = (number: string) => `iso6523-actorid-upis::0192:${number}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The service's environment for delivering to the stand-ins (its SML and Directory settings). */
export interface DeliveryPeers {
  env: Record<string, string>;
  sml: LocalSml;
  directoryIndexed: () => number;
  close(): Promise<void>;
}

export async function startPeers(options: DeliveryOptions): Promise<DeliveryPeers> {
  const sml = await startLocalSml(0, undefined, options.pace);
  const directory = await startLocalDirectory(0, undefined, options.pace);
  return {
    env: {
      SML_URL: sml.url,
      SML_SMP_ID: SMP_ID,
      DIRECTORY_URL: directory.url,
      SML_CALLS_AT_ONCE: String(options.callsAtOnce.sml),
      DIRECTORY_CALLS_AT_ONCE: String(options.callsAtOnce.directory),
      SML_LIST_SIZE: String(options.listSize),
    },
    sml,
    directoryIndexed: () => directory.indexed.size,
    async close() {
      await sml.close();
      await directory.close();
    },
  };
}

/**
 * The data set's participants count as delivered: the cursors start at the log's end, so the service delivers only
 * what this scenario adds (PostgreSQL; before the service starts).
 */
export async function primeCursors(databaseUrl: string): Promise<void> {
  const db = openPostgres({ connectionString: databaseUrl, maxConnections: 1 });
  try {
    await db.query(
      `INSERT INTO delivery_cursors (target, seq) SELECT target, (SELECT seq FROM change_log_position)
         FROM unnest(ARRAY['sml', 'directory']) AS target
       ON CONFLICT (target) DO UPDATE SET seq = excluded.seq, attempts = 0, last_error = NULL, probe_horizon = NULL`,
    );
  } finally {
    await db.close();
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number);

/** The bulk and the trickle against the running service `url`, delivering to `peers`. */
export async function measureDelivery(
  url: string,
  data: Dataset,
  peers: DeliveryPeers,
  options: DeliveryOptions,
  log: (message: string) => void,
): Promise<DeliveryRun> {
  const held = () => peers.sml.registrations.get(SMP_ID) ?? new Set<string>();
  const bulk = Array.from({ length: options.organizations }, (_, i) => qualified(bulkNumber(i + 1)));
  const started = performance.now();
  let importSeconds = Number.NaN;
  const importing = timeImport({ ...data, database: data.databaseEnv }, options.organizations, log, bulkNumber).then(
    (run) => {
      importSeconds = run.seconds;
      if (run.exitCode !== 0) throw new Error(`the delivery scenario's import exited ${run.exitCode}`);
    },
  );
  // The trickle: one registration every 200 ms through the API, its commit the moment its 201 arrives.
  const committed = new Map<string, number>();
  let trickling = true;
  const trickle = (async () => {
    for (let i = 1; trickling; i += 1) {
      const provider = data.providers[i % data.providers.length] as { username: string };
      const number = trickleNumber(i);
      const response = await fetch(`${url}/rest/api/participants`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${provider.username}:${data.password}`).toString('base64')}`,
        },
        body: JSON.stringify({
          icd: '0192',
          organizationIdentifier: number,
          name: `Enkeltregistrering ${i} AS`,
          processes: data.freeProcessIds.map((identifier) => ({ identifier })),
          contact: { name: 'Kari Nordmann', email: 'kari@example.no' },
        }),
      });
      if (response.status === 201) committed.set(qualified(number), Date.now());
      else
        log(`delivery: a trickle registration answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
      await sleep(200);
    }
  })();
  let lastLog = 0;
  const allIn = async (count: () => number, limitMs: number) => {
    for (;;) {
      const n = count();
      if (n >= options.organizations || performance.now() - started >= limitMs) break;
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        log(
          `delivery: ${bulkHeld()} of ${options.organizations} in the SML, ${peers.directoryIndexed()} in the Directory`,
        );
      }
      await sleep(50);
    }
    return (performance.now() - started) / 1000;
  };
  const limitMs = options.limitSeconds * 1000;
  const bulkHeld = () => bulk.reduce((n, participant) => n + (held().has(participant) ? 1 : 0), 0);
  const [smlSeconds] = await Promise.all([allIn(bulkHeld, limitMs), importing]);
  trickling = false;
  await trickle;
  // Every organization the Directory has came from this scenario (and the trickle's).
  const directorySeconds = await allIn(() => peers.directoryIndexed() - committed.size, limitMs);
  // The trickle's last ones reach the SML shortly after.
  const trickleDeadline = performance.now() + 30_000;
  while ([...committed.keys()].some((p) => !held().has(p)) && performance.now() < trickleDeadline) await sleep(50);
  const latencies = [...committed]
    .map(([participant, at]) => (peers.sml.createdAt.get(participant) ?? Number.NaN) - at)
    .filter(Number.isFinite)
    .map((ms) => Math.max(0, ms))
    .sort((a, b) => a - b);
  const complete = bulkHeld() === options.organizations && latencies.length === committed.size;
  const ceiling = await ceilingOf(options);
  return {
    organizations: options.organizations,
    latencyMs: options.pace.latencyMs,
    maxInFlight: options.pace.maxInFlight,
    callsAtOnce: options.callsAtOnce,
    listSize: options.listSize,
    importSeconds,
    smlSeconds,
    directorySeconds,
    smlPerSecond: options.organizations / smlSeconds,
    directoryPerSecond: options.organizations / directorySeconds,
    trickle: {
      count: committed.size,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      maxMs: latencies.at(-1) ?? Number.NaN,
    },
    ceiling,
    complete,
  };
}

/** What a bare client achieves against fresh stand-ins of the same pace, as many calls at once as the service, for 3 s each. */
async function ceilingOf(options: DeliveryOptions) {
  const sml = await startLocalSml(0, undefined, options.pace);
  const directory = await startLocalDirectory(0, undefined, options.pace);
  try {
    const rate = async (callers: number, call: (n: number) => Promise<void>) => {
      let calls = 0;
      const until = performance.now() + 3000;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: callers }, async () => {
          while (performance.now() < until) await call((calls += 1));
        }),
      );
      return calls / ((performance.now() - started) / 1000);
    };
    const client = smlClient({ url: sml.url, smpId: SMP_ID });
    const list = (n: number) =>
      Array.from({ length: options.listSize }, (_, i) => qualified(norwegianNumberOf(n * options.listSize + i, 6, 1)));
    const smlListCallsPerSecond = await rate(options.callsAtOnce.sml, (n) => client.createList(list(n)));
    const indexer = directoryClient({ url: directory.url });
    const directoryCallsPerSecond = await rate(options.callsAtOnce.directory, (n) =>
      indexer.put(qualified(norwegianNumberOf(n, 6, 1))),
    );
    return {
      smlListCallsPerSecond,
      smlOrganizationsPerSecond: smlListCallsPerSecond * options.listSize,
      directoryCallsPerSecond,
    };
  } finally {
    await sml.close();
    await directory.close();
  }
}
