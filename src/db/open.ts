import { mkdirSync } from 'node:fs';
import type { Database } from './database.js';
import { openEmbedded } from './embedded.js';
import { migrate } from './migrate.js';
import { openPostgres } from './postgres.js';

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
