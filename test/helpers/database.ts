import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Database } from '../../src/db/database.js';
import { openEmbedded } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { openPostgres } from '../../src/db/postgres.js';

const ROOT = join(import.meta.dirname, '..', '..');
const OUTPUT = join(ROOT, 'test-output');
const TEMPLATE_PREFIX = 'embedded-migrated-';

/**
 * What the migrated embedded database is made of: the migrations, the code that applies and archives them, PGlite's
 * version and this file. Its archive is named by their hash, so a checkout whose migrations changed makes a new one
 * and an unchanged one takes the last run's (an initdb and every migration: half a minute on a loaded machine).
 */
function templateInputs(): Buffer[] {
  const migrations = join(ROOT, 'src', 'db', 'migrations');
  const files = [
    ...readdirSync(migrations)
      .filter((name) => name.endsWith('.sql'))
      .sort()
      .map((name) => join(migrations, name)),
    join(ROOT, 'src', 'db', 'migrate.ts'),
    join(ROOT, 'src', 'db', 'embedded.ts'),
    join(ROOT, 'src', 'db', 'tar-names.ts'),
    join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'),
    join(import.meta.dirname, 'database.ts'),
  ];
  return files.flatMap((file) => [Buffer.from(`${file.slice(ROOT.length)}\0`), readFileSync(file), Buffer.from('\0')]);
}

let templateFile: string | undefined;

/** The embedded database as the migrations leave it, a gzipped tar made by the suite's global set-up. */
function embeddedMigrated(): string {
  if (templateFile) return templateFile;
  const hash = createHash('sha256');
  for (const part of templateInputs()) hash.update(part);
  return (templateFile = join(OUTPUT, `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 16)}.tar.gz`));
}

/**
 * Writes the migrated embedded database that each test file's embedded database, and each data directory of
 * `migratedDataDirectory`, starts from, unless the one for these migrations is there already. Written under another
 * name and renamed, so that a run cut off halfway leaves none; older ones are removed.
 */
export async function prepareEmbeddedTemplate(): Promise<void> {
  const file = embeddedMigrated();
  if (existsSync(file)) return;
  const db = await openEmbedded();
  await migrate(db);
  const archive = await db.dump?.();
  if (!archive) throw new Error('the embedded database makes no archive');
  await db.close();
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, Buffer.from(await archive.arrayBuffer()));
  await rename(partial, file);
  for (const name of await readdir(OUTPUT))
    // Older ones, and the unkeyed one of earlier versions; another run's partial one is its own to rename.
    if (name.startsWith('embedded-migrated') && !name.endsWith('.partial') && join(OUTPUT, name) !== file)
      await rm(join(OUTPUT, name), { force: true });
}

const execFileAsync = promisify(execFile);

/**
 * `dir` (made, owner's only) holding the migrated embedded database, for a server or command line process started
 * on it: what its first start on an empty directory would make (PGlite's initdb, then every migration) is there
 * already, and nothing else is (no user, no catalogue: the start is a first start still). For tests that are not
 * about a first start on nothing, the migrations or the data directory's making; those start on an empty one.
 */
export async function migratedDataDirectory(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await execFileAsync('tar', ['-xzf', embeddedMigrated(), '-C', dir]);
  return dir;
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
      await (migratedArchive ??= readFile(embeddedMigrated()).then((bytes) => new Blob([bytes]))),
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
