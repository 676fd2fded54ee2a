import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database } from '../../src/db/database.js';
import { openEmbedded } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { openPostgres } from '../../src/db/postgres.js';

/** The embedded database as the migrations leave it, made once per run by the suite's global set-up. */
const EMBEDDED_MIGRATED = join(import.meta.dirname, '..', '..', 'test-output', 'embedded-migrated.tar.gz');

/** Writes the migrated embedded database that each test file's embedded database starts from. */
export async function prepareEmbeddedTemplate(): Promise<void> {
  const db = await openEmbedded();
  await migrate(db);
  const archive = await db.dump?.();
  if (!archive) throw new Error('the embedded database makes no archive');
  await writeFile(EMBEDDED_MIGRATED, Buffer.from(await archive.arrayBuffer()));
  await db.close();
}

/** Read once per worker: its files each load their own database from it. */
let migratedArchive: Promise<Blob> | undefined;

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const testDatabaseKind = process.env.TEST_DATABASE === 'embedded' ? 'embedded' : 'postgres';

/**
 * A migrated database that belongs to one test file: a fresh schema on the machine's PostgreSQL, or a fresh
 * in-memory embedded PostgreSQL (loaded from the migrated one: half the time of an initdb). Closing it drops the
 * schema.
 */
export async function openTestDatabase(): Promise<Database> {
  if (testDatabaseKind === 'embedded')
    return openEmbedded(
      undefined,
      await (migratedArchive ??= readFile(EMBEDDED_MIGRATED).then((bytes) => new Blob([bytes]))),
    );
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const admin = openPostgres({ connectionString: TEST_DATABASE_URL, maxConnections: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  // Extensions live once per database: made in `public`, which every test schema sees, so that no file's
  // migration creates them in its own schema and takes them away from the others when that schema is dropped.
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public').catch(ignoreConcurrentCreate);
  const db = openPostgres({ connectionString: TEST_DATABASE_URL, schema: `${schema},public`, maxConnections: 4 });
  await migrate(db);
  return {
    ...db,
    async close() {
      await db.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    },
  };
}

/** The PostgreSQL schema of a test database (the first on its search path). */
export async function schemaOf(db: Database): Promise<string> {
  const [current] = await db.query<{ name: string }>('SELECT current_schema() AS name');
  if (!current) throw new Error('no current schema');
  return current.name;
}

/**
 * Another pool on the schema of a PostgreSQL test database, migrated as a starting instance migrates: what a second
 * instance of the service sharing the database has.
 */
export async function openSameSchema(db: Database, maxConnections = 4): Promise<Database> {
  const other = openPostgres({
    connectionString: TEST_DATABASE_URL,
    schema: `${await schemaOf(db)},public`,
    maxConnections,
  });
  await migrate(other);
  return other;
}

/** Two files creating the extension at once: one wins, the other sees a duplicate; both then find it. */
function ignoreConcurrentCreate(error: { code?: string }): void {
  if (error.code !== '23505' && error.code !== '42710') throw error;
}
