/**
 * What the change log costs and how fast deliveries follow, on a fresh PostgreSQL schema and a fresh embedded
 * database (by hand, not in CI):
 *
 *   npx tsx scripts/change-log-cost.ts [--writes 2000] [--concurrency 8] [--participants 300] [--only postgres|embedded]
 *                                      [--failing fault|timeout|trickle|clientFault] [--skip-write-cost]
 *
 * 1. a write (one INSERT in its own transaction) without and with its change log entry, same run, same
 *    concurrency: writes/s and p50/p99 latency; the entries/s appended is the rate with the log;
 * 2. delivery lag: participants added through the API at the same concurrency while a local SML receives them;
 *    lag = SML Create received - API answer, p50/p99. With `--failing`, one organization added first fails for ever
 *    at the SML (that kind of failure, for it alone): the lag is the others', and `setAside` says where it went.
 * CHANGE_LOG_COST_DATABASE_URL names the server (default postgres://postgres@127.0.0.1:5432/test).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { appendChange, SYSTEM_ACTOR } from '../src/db/change-log.js';
import { startLocalSml } from '../dev/local-sml.js';
import { norwegianNumberOf } from '../bench/keys.js';
import type { Database } from '../src/db/database.js';
import { openEmbedded } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { Role } from '../src/http/auth.js';
import { insertUser } from '../src/users/repository.js';

const { values: options } = parseArgs({
  options: {
    writes: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '8' },
    participants: { type: 'string', default: '300' },
    only: { type: 'string' },
    failing: { type: 'string' },
    'skip-write-cost': { type: 'boolean', default: false },
  },
});
const FAILURES = ['fault', 'timeout', 'trickle', 'clientFault'] as const;
const failing = options.failing as (typeof FAILURES)[number] | undefined;
if (failing !== undefined && !FAILURES.includes(failing)) throw new Error(`--failing: one of ${FAILURES.join(', ')}`);
const writes = Number(options.writes);
const concurrency = Number(options.concurrency);
const participants = Number(options.participants);
const serverUrl = process.env.CHANGE_LOG_COST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

async function run(count: number, work: (index: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next++;
        const begin = performance.now();
        await work(index);
        latencies.push(performance.now() - begin);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: Math.round(count / seconds),
    p50: percentile(latencies, 0.5).toFixed(2),
    p99: percentile(latencies, 0.99).toFixed(2),
  };
}

async function writeCost(db: Database) {
  const insert = (tx: Parameters<Parameters<Database['transaction']>[0]>[0], title: string) =>
    tx.query<{ id: string }>('INSERT INTO capabilities (title) VALUES ($1) RETURNING id', [title]);
  const without = await run(writes, (index) =>
    db.transaction(async (tx) => void (await insert(tx, `without ${index}`))),
  );
  const withLog = await run(writes, (index) =>
    db.transaction(async (tx) => {
      const [row] = await insert(tx, `with ${index}`);
      await appendChange(tx, SYSTEM_ACTOR, {
        resource: 'capability',
        identifier: row?.id ?? '',
        operation: 'create',
        before: null,
        after: { title: `with ${index}` },
      });
    }),
  );
  return { without, withLog };
}

async function deliveryLag(db: Database) {
  const sml = await startLocalSml();
  const [provider] = await db.query<{ id: string }>(
    `WITH ap AS (INSERT INTO access_point_providers (title, contact_name) VALUES ('Lag AP', 'Ops') RETURNING id),
          a AS (INSERT INTO access_points (title, provider_id) SELECT 'Lag AP', id FROM ap RETURNING id)
     INSERT INTO service_providers (title, access_point_id) SELECT 'Lag SP', id FROM a RETURNING id`,
  );
  const password = randomBytes(12).toString('base64url');
  await insertUser(db, {
    username: 'lag-provider',
    password,
    role: Role.serviceProvider,
    serviceProviderId: provider?.id,
  });
  const authorization = `Basic ${Buffer.from(`lag-provider:${password}`).toString('base64')}`;
  const app = await buildApp({ db, sml: { url: sml.url, smpId: 'lag-smp' }, delivery: { intervalMs: 200 } });
  await app.ready();
  const answered = new Map<string, number>();
  const add = async (organizationIdentifier: string) => {
    const response = await app.inject({
      method: 'POST',
      url: '/rest/api/participants',
      headers: { authorization, 'content-type': 'application/json' },
      payload: { icd: '0192', organizationIdentifier, name: 'Lag AS', processes: [], contact: { name: 'Ops' } },
    });
    if (response.statusCode !== 201) throw new Error(`add participant: ${response.statusCode} ${response.body}`);
  };
  // Valid Norwegian numbers (the API refuses others), of this run's own: a random start, then one each.
  const start = randomInt(0, 5_000_000);
  const organizationNumber = (index: number) => norwegianNumberOf((start + index) % 10_000_000, 6, 1);
  if (failing !== undefined) {
    const organizationIdentifier = organizationNumber(9_999_999);
    sml.failFor(`iso6523-actorid-upis::0192:${organizationIdentifier}`, failing);
    await add(organizationIdentifier);
  }
  const rate = await run(participants, async (index) => {
    const organizationIdentifier = organizationNumber(index);
    await add(organizationIdentifier);
    answered.set(`iso6523-actorid-upis::0192:${organizationIdentifier}`, Date.now());
  });
  const deadline = Date.now() + 120_000;
  const deliveredOfOthers = () => [...answered.keys()].filter((participant) => sml.createdAt.has(participant)).length;
  while (deliveredOfOthers() < participants && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  const lags = [...answered]
    .map(([participant, at]) => (sml.createdAt.get(participant) ?? Number.POSITIVE_INFINITY) - at)
    .sort((a, b) => a - b);
  const [status] = await db
    .query<{ setAside: number }>(
      `SELECT count(*)::int AS "setAside" FROM delivery_set_aside WHERE target = 'sml' AND waiting_for IS NULL`,
    )
    .catch(() => [{ setAside: 0 }]);
  await app.close();
  await sml.close();
  return {
    addsPerSecond: rate.perSecond,
    delivered: deliveredOfOthers(),
    lagP50ms: percentile(lags, 0.5),
    lagP99ms: percentile(lags, 0.99),
    ...(failing === undefined ? {} : { failing, setAside: status?.setAside }),
  };
}

async function measure(kind: 'postgres' | 'embedded') {
  let db: Database;
  let cleanup = async () => undefined as unknown;
  if (kind === 'embedded') {
    db = await openEmbedded();
  } else {
    const schema = `change_log_cost_${randomBytes(4).toString('hex')}`;
    const admin = openPostgres({ connectionString: serverUrl, maxConnections: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public').catch(() => undefined);
    db = openPostgres({ connectionString: serverUrl, schema: `${schema},public`, maxConnections: concurrency + 4 });
    cleanup = async () => {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    };
  }
  await migrate(db);
  try {
    const cost = options['skip-write-cost'] ? {} : await writeCost(db);
    const lag = await deliveryLag(db);
    console.log(JSON.stringify({ database: kind, writes, concurrency, ...cost, delivery: lag }));
  } finally {
    await db.close();
    await cleanup();
  }
}

for (const kind of ['postgres', 'embedded'] as const) {
  if (!options.only || options.only === kind) await measure(kind);
}
