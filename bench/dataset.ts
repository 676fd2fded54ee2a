import pg from 'pg';
import type { Database } from '../src/db/database.js';
import { openEmbedded } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { hashPassword } from '../src/users/password.js';
import { loadCatalogue } from './catalogue.js';
import { PROVIDER_COUNT, sqlKeys, sqlParticipant } from './keys.js';
import { addPublishedEndpoint, sampleLookups, type SmpLookup } from './smp.js';

/**
 * Distinct participants the cold SMP scenarios draw from, each once: more than a cold run reaches with its warm-up
 * (some 20,000 lookups a second for 13 s), so that none is answered from what the service kept.
 */
const SMP_LOOKUPS = 300_000;

/** What the scenarios need to know about the data set. */

export interface Dataset {
  participants: number;
  password: string;
  /** Provider k's id and username; participant n belongs to provider `n % PROVIDER_COUNT`. */
  providers: { id: string; username: string }[];
  authority: string;
  processIds: string[];
  /** Two processes any participant may take (not restricted, no ICD requirement, no dependencies). */
  freeProcessIds: [string, string];
  /** Published (participant, document type) pairs of random participants, for the SMP scenarios. */
  smpLookups: SmpLookup[];
  buildSeconds: number;
  steps: Record<string, number>;
  /** How the service and the command line open it: DATABASE_URL, or REGISTRY_DATA_DIR. */
  databaseEnv: Record<string, string>;
}

/** A data set in a database of its own on a PostgreSQL server. */
export interface PostgresDataset extends Dataset {
  databaseName: string;
  databaseUrl: string;
}

/** The database URL of `name` on the server of `adminUrl`. */
export function databaseUrlOf(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Up to 12 processes any participant may take (not restricted, no ICD requirement, no dependencies), billing first. */
export async function unrestrictedProcesses(db: Database): Promise<{ id: string }[]> {
  return db.query<{ id: string }>(
    `SELECT id FROM processes p WHERE NOT restricted AND required_icds = '{}'
        AND NOT EXISTS (SELECT 1 FROM process_dependencies d WHERE d.process_id = p.id)
      ORDER BY value LIKE '%billing%' DESC, value LIMIT 12`,
  );
}

export async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

async function timed<T>(steps: Record<string, number>, step: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  steps[step] = (performance.now() - started) / 1000;
  return result;
}

async function addProviders(db: Database, password: string) {
  const hash = await hashPassword(password);
  const [apProvider] = await db.query<{ id: string }>(
    `INSERT INTO access_point_providers (title, contact_name) VALUES ('Bench Access Point Provider', 'Bench') RETURNING id`,
  );
  const [accessPoint] = await db.query<{ id: string }>(
    `INSERT INTO access_points (title, provider_id) VALUES ('Bench Access Point', $1) RETURNING id`,
    [apProvider?.id],
  );
  await addPublishedEndpoint(db, accessPoint?.id as string);
  const providers = await db.query<{ id: string; username: string }>(
    `WITH sp AS (
       INSERT INTO service_providers (title, access_point_id)
       SELECT 'Bench Provider ' || lpad(k::text, 2, '0'), $1 FROM generate_series(0, $2 - 1) k RETURNING id, title)
     INSERT INTO users (username, password_hash, role, service_provider_id)
     SELECT 'provider-' || right(title, 2), $3, 'SERVICE_PROVIDER', id FROM sp
     RETURNING service_provider_id AS id, username`,
    [accessPoint?.id, PROVIDER_COUNT, hash],
  );
  await db.query(`INSERT INTO users (username, password_hash, role) VALUES ('authority', $1, 'REGISTRY_AUTHORITY')`, [
    hash,
  ]);
  return providers.sort((a, b) => a.username.localeCompare(b.username));
}

interface Constraint {
  table: string;
  name: string;
  definition: string;
  type: string;
  index: string | null;
}

/**
 * The constraints and indexes of the two big tables (and foreign keys into them), so that they can be
 * dropped for the bulk load and built once afterwards, which is several times faster than maintaining them
 * row by row. They are read from the catalog, so whatever the migrations define is restored exactly.
 */
async function indexesOf(db: Database) {
  const tables = `('participants'::regclass, 'participant_processes'::regclass)`;
  const constraints = await db.query<Constraint>(
    `SELECT conrelid::regclass::text AS table, conname AS name, pg_get_constraintdef(oid) AS definition, contype AS type,
            CASE WHEN contype IN ('p', 'u') THEN pg_get_indexdef(conindid) END AS index
       FROM pg_constraint WHERE contype IN ('p', 'u', 'f') AND (conrelid IN ${tables} OR confrelid IN ${tables})`,
  );
  const indexes = await db.query<{ name: string; definition: string }>(
    `SELECT indexrelid::regclass::text AS name, pg_get_indexdef(indexrelid) AS definition FROM pg_index i
      WHERE indrelid IN ${tables}
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid)`,
  );
  return { constraints, indexes };
}

/**
 * Runs the statements on `workers` connections at once, each in a transaction of its own so that no lock is
 * held across statements (index builds on one table share their lock; nothing can deadlock).
 */
async function inParallel(db: Database, statements: string[], workers: number): Promise<void> {
  const queue = [...statements];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let statement = queue.shift(); statement; statement = queue.shift()) {
        const next = statement;
        await db.transaction(async (tx) => {
          await tx.query(`SET LOCAL maintenance_work_mem = '256MB'`);
          await tx.query(next);
        });
      }
    }),
  );
}

function participantRows(from: number, to: number, processIds: readonly string[]): string {
  const n = 'src.n';
  const popular = `'{${processIds.join(',')}}'::uuid[]`;
  return `
    WITH src AS MATERIALIZED (SELECT n, gen_random_uuid() AS id FROM generate_series(${from}, ${to}) n),
    inserted AS (
      -- Marked checked: the 0192 numbers (85 %) are valid, the other schemes' made up (bench/keys.ts), and the start's
      -- check of earlier participants would otherwise run through all of them while the benchmark measures.
      INSERT INTO participants (id, service_provider_id, icd, organization_identifier, name, registration_date,
                                last_modification_date, contact_name, contact_email, contact_phone, identifier_checked)
      SELECT id, ($1::uuid[])[1 + ${sqlKeys.providerIndex(n)}], ${sqlKeys.icd(n)}, ${sqlKeys.organization(n)},
             ${sqlParticipant.name(n)}, ${sqlParticipant.registration(n)}, ${sqlParticipant.lastModification(n)},
             ${sqlParticipant.contactName(n)}, ${sqlParticipant.contactEmail(n)}, ${sqlParticipant.contactPhone(n)}, true
        FROM src)
    INSERT INTO participant_processes (participant_id, process_id, icd, organization_identifier, added_at)
    SELECT src.id, (${popular})[1 + (src.n + 5 * k) % ${processIds.length}], ${sqlKeys.icd(n)}, ${sqlKeys.organization(n)},
           -- Given at registration, the first process, the others when last modified: days as varied as a registry's.
           (CASE WHEN k = 0 THEN ${sqlParticipant.registration(n)} ELSE ${sqlParticipant.lastModification(n)} END)::timestamp AT TIME ZONE 'UTC'
      FROM src CROSS JOIN generate_series(0, 3) k WHERE k < ${sqlKeys.processCount(n)}`;
}

/** Participants 1..count, loaded in `workers` ranges at once with the big tables' indexes dropped. */
async function addParticipants(
  db: Database,
  count: number,
  providerIds: string[],
  processIds: string[],
  workers: number,
  steps: Record<string, number>,
) {
  const { constraints, indexes } = await indexesOf(db);
  const foreignKeys = constraints.filter((c) => c.type === 'f');
  const keys = constraints.filter((c) => c.type !== 'f');
  await db.transaction(async (tx) => {
    for (const c of [...foreignKeys, ...keys]) await tx.query(`ALTER TABLE ${c.table} DROP CONSTRAINT ${c.name}`);
    for (const index of indexes) await tx.query(`DROP INDEX ${index.name}`);
  });
  const chunk = Math.ceil(count / workers);
  await timed(steps, 'insert participants and processes', () =>
    Promise.all(
      Array.from({ length: workers }, (_, w) => [w * chunk + 1, Math.min(count, (w + 1) * chunk)] as const)
        .filter(([from, to]) => from <= to)
        .map(([from, to]) => db.query(participantRows(from, to, processIds), [providerIds])),
    ),
  );
  // Keys are built as plain unique indexes first, which build side by side, then attached as constraints.
  await timed(steps, 'build keys and indexes', () =>
    inParallel(db, [...keys.map((c) => c.index as string), ...indexes.map((index) => index.definition)], workers),
  );
  await inParallel(
    db,
    keys.map(
      (c) =>
        `ALTER TABLE ${c.table} ADD CONSTRAINT ${c.name} ${c.type === 'p' ? 'PRIMARY KEY' : 'UNIQUE'} USING INDEX ${c.name}`,
    ),
    1,
  );
  await timed(steps, 'validate foreign keys', () =>
    inParallel(
      db,
      foreignKeys.map((c) => `ALTER TABLE ${c.table} ADD CONSTRAINT ${c.name} ${c.definition}`),
      workers,
    ),
  );
  await timed(steps, 'vacuum analyze', () =>
    inParallelPlain(db, ['VACUUM (ANALYZE) participants', 'VACUUM (ANALYZE) participant_processes']),
  );
  // The build leaves gigabytes of dirty pages: flushed now, not by a checkpoint in the middle of the first scenarios.
  await timed(steps, 'checkpoint', () => db.query('CHECKPOINT'));
}

/** VACUUM cannot run inside a transaction. */
async function inParallelPlain(db: Database, statements: string[]): Promise<void> {
  await Promise.all(statements.map((statement) => db.query(statement)));
}

interface FillOptions {
  participants: number;
  /** Connections filling the tables at once. */
  workers: number;
  codeListDir: string;
  log: (message: string) => void;
}

export interface DatasetOptions extends FillOptions {
  adminUrl: string;
}

const secondsSince = (started: number) => (performance.now() - started) / 1000;

/** Migrates `db` (named `where` in the log) and fills it: catalogue, providers and users, participants. */
async function fill(db: Database, options: FillOptions, where: string) {
  const steps: Record<string, number> = {};
  await timed(steps, 'migrate', () => migrate(db));
  const processIds = await timed(steps, 'catalogue', () => loadCatalogue(db, options.codeListDir));
  const password = `bench-${crypto.randomUUID()}`;
  const providers = await timed(steps, 'providers and users', () => addProviders(db, password));
  const popular = await unrestrictedProcesses(db);
  if (popular.length < 4) throw new Error('the catalogue needs at least 4 unrestricted processes');
  options.log(`loading ${options.participants} participants into ${where}`);
  await addParticipants(
    db,
    options.participants,
    providers.map((p) => p.id),
    popular.map((p) => p.id),
    options.workers,
    steps,
  );
  const smpLookups = await timed(steps, 'smp lookups', () => sampleLookups(db, SMP_LOOKUPS));
  return {
    participants: options.participants,
    password,
    providers,
    authority: 'authority',
    processIds,
    freeProcessIds: [popular[0]?.id as string, popular[1]?.id as string] as [string, string],
    smpLookups,
    steps,
  };
}

/** A fresh database named after the time, migrated and filled; the caller drops it. */
export async function buildDataset(options: DatasetOptions): Promise<PostgresDataset> {
  const databaseName = `registry_bench_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}`;
  const databaseUrl = databaseUrlOf(options.adminUrl, databaseName);
  const started = performance.now();
  await createDatabase(options.adminUrl, databaseName);
  const db = openPostgres({ connectionString: databaseUrl, maxConnections: Math.max(2, options.workers) });
  let built = false;
  try {
    const filled = await fill(db, options, databaseName);
    built = true;
    return {
      ...filled,
      databaseName,
      databaseUrl,
      databaseEnv: { DATABASE_URL: databaseUrl },
      buildSeconds: secondsSince(started),
    };
  } finally {
    await db.close();
    // A build that failed leaves nothing behind (the caller drops a database it received).
    if (!built) await dropDatabase(options.adminUrl, databaseName);
  }
}

/**
 * The same data set in the embedded database (PGlite) in `dataDir`, closed again so that the service can open
 * it (REGISTRY_DATA_DIR). PGlite runs one statement at a time, so it is filled on one connection; the caller
 * removes the directory.
 */
export async function buildEmbeddedDataset(
  options: Omit<FillOptions, 'workers'> & { dataDir: string },
): Promise<Dataset> {
  const started = performance.now();
  const db = await openEmbedded(options.dataDir);
  const filled = await fill(db, { ...options, workers: 1 }, options.dataDir).finally(() => db.close());
  return { ...filled, databaseEnv: { REGISTRY_DATA_DIR: options.dataDir }, buildSeconds: secondsSince(started) };
}
