import { mkdirSync } from 'node:fs';
import type { Database } from './database.js';
import { openEmbedded } from './embedded.js';
import { migrate } from './migrate.js';
import { openPostgres } from './postgres.js';
import { ConnectionStringError, hostOf } from './primary-host.js';

export interface DatabaseSettings {
  DATABASE_URL?: string;
  REGISTRY_DATA_DIR: string;
}

/** PostgreSQL when DATABASE_URL is set, else the embedded PostgreSQL in REGISTRY_DATA_DIR; migrated. */
export async function openDatabase(settings: DatabaseSettings): Promise<Database> {
  let db: Database;
  if (settings.DATABASE_URL) {
    db = openPostgres({ connectionString: settings.DATABASE_URL });
  } else {
    mkdirSync(settings.REGISTRY_DATA_DIR, { recursive: true });
    db = await openEmbedded(settings.REGISTRY_DATA_DIR);
  }
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}

/** How the standbys' connections show in their pg_stat_activity. */
export const STANDBY_APPLICATION_NAME = 'registry-reads';

/**
 * The hot standbys DATABASE_READ_URLS names (connection strings separated by commas or spaces), each named by its host
 * and database (never its credentials); none without the setting. Not migrated: they replay the primary.
 */
export function openStandbys(settings: { DATABASE_URL?: string; DATABASE_READ_URLS?: string }): Array<{ name: string; db: Database }> {
  if (!settings.DATABASE_READ_URLS) return [];
  if (!settings.DATABASE_URL) {
    throw new ConnectionStringError('DATABASE_READ_URLS names hot standbys of a PostgreSQL primary: set DATABASE_URL to that primary (the embedded database has no standbys)');
  }
  const urls = settings.DATABASE_READ_URLS.split(/[\s,]+(?=postgres(?:ql)?:\/\/)/i).map((url) => url.trim()).filter((url) => url !== '');
  return urls.map((url) => ({ name: hostOf(url), db: openPostgres({ connectionString: url, applicationName: STANDBY_APPLICATION_NAME, connectionTimeoutMs: 5000 }) }));
}
