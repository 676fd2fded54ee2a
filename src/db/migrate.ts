import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.js';

const migrationsDir = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** The migrations this version of the registry ships, in the order they apply. */
export async function migrationFiles(): Promise<string[]> {
  return (await readdir(migrationsDir)).filter((name) => name.endsWith('.sql')).sort();
}

/**
 * Applies the migrations not yet applied, in file-name order, each in its own transaction. A transaction
 * advisory lock (keyed by the schema) makes two instances starting at once apply each migration once.
 */
export async function migrate(db: Database): Promise<string[]> {
  const files = await migrationFiles();
  await db
    .query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    )
    .catch(ignoreConcurrentCreate);
  const applied: string[] = [];
  for (const name of files) {
    const sql = await readFile(join(migrationsDir, name), 'utf8');
    const ran = await db.transaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('registry-migrations:' || current_schema()))`);
      const done = await tx.query('SELECT 1 FROM schema_migrations WHERE name = $1', [name]);
      if (done.length > 0) return false;
      await tx.runScript(sql);
      await tx.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
      return true;
    });
    if (ran) applied.push(name);
  }
  return applied;
}

/** Two instances may race to create the bookkeeping table; the loser finds it made. */
function ignoreConcurrentCreate(error: unknown): void {
  const code = (error as { code?: string }).code;
  if (code !== '23505' && code !== '42P07') throw error;
}
