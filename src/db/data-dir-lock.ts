import { readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { errorCodeOf } from '../core/errors.js';
import type { Database } from './database.js';
import { restoreEmbedded } from './embedded.js';
import {
  DatabaseStartError,
  openDatabase,
  unusableDataDirectory,
  type DatabaseSettings,
  type OpenOptions,
} from './open.js';
import { keepOwnerOnly } from './private-directory.js';

/** The embedded database is one process's only: a second one would corrupt it. */
export class DataDirectoryInUseError extends Error {}

interface LockContent {
  pid: number;
  holder: string;
  since: string;
}

const LOCK_FILE = 'registry.lock';

/**
 * Takes the data directory of the embedded database for this process: a lock file holding our pid.
 * A lock left behind by a process that no longer runs is taken over. `holder` says who we are
 * ("the registry server", "the registry command line") in the message another process gets.
 */
function lockDataDirectory(dir: string, holder: string): () => void {
  keepOwnerOnly(dir);
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; ; attempt += 1) {
    try {
      writeFileSync(path, lockContent(holder), { flag: 'wx' });
      break;
    } catch (error) {
      if (errorCodeOf(error) !== 'EEXIST' || attempt > 0) throw error;
      const other = readLock(path);
      if (other && other.pid !== process.pid && isRunning(other.pid)) {
        throw new DataDirectoryInUseError(
          `The embedded database in ${resolve(dir)} is in use by ${other.holder} (pid ${other.pid}, since ${other.since}). ` +
            'Stop it first, or point REGISTRY_DATA_DIR or DATABASE_URL elsewhere.',
        );
      }
      unlinkSync(path);
    }
  }
  const release = () => {
    if (readLock(path)?.pid === process.pid) unlinkSync(path);
    process.off('exit', release);
  };
  process.on('exit', release);
  return release;
}

/** The data directory locked for this process; one it cannot make or write is the operator's to fix. */
function takenDataDirectory(dir: string, holder: string): () => void {
  try {
    return lockDataDirectory(dir, holder);
  } catch (error) {
    throw error instanceof DataDirectoryInUseError ? error : unusableDataDirectory(dir, error);
  }
}

const lockContent = (holder: string) =>
  JSON.stringify({ pid: process.pid, holder, since: new Date().toISOString() } satisfies LockContent);

function readLock(path: string): LockContent | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LockContent;
  } catch {
    return undefined;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCodeOf(error) === 'EPERM';
  }
}

/**
 * The configured database, migrated; for the embedded one, only after taking its data directory (made its owner's
 * only), which closing the database gives back.
 */
export async function openDatabaseExclusively(
  settings: DatabaseSettings,
  holder: string,
  options: OpenOptions = {},
): Promise<Database> {
  if (settings.DATABASE_URL) return openDatabase(settings, options);
  const release = takenDataDirectory(settings.REGISTRY_DATA_DIR, holder);
  let db: Database;
  try {
    db = await openDatabase(settings, options);
  } catch (error) {
    release();
    throw error;
  }
  // PGlite sets the modes of the files it copies and rewrites itself (0666, 0644), whatever the umask.
  keepOwnerOnly(settings.REGISTRY_DATA_DIR);
  return {
    ...db,
    async close() {
      try {
        await db.close();
        keepOwnerOnly(settings.REGISTRY_DATA_DIR);
      } finally {
        release();
      }
    },
  };
}

/**
 * A backup of the embedded database (`registry backup`) made the data directory `settings.REGISTRY_DATA_DIR`, which
 * must be new or empty; then opened once as a start opens it, so that a damaged archive fails here and an older one
 * is migrated to this version.
 */
export async function restoreDataDirectory(settings: DatabaseSettings, archive: Blob, holder: string): Promise<void> {
  const dir = settings.REGISTRY_DATA_DIR;
  const release = takenDataDirectory(dir, holder);
  try {
    if (readdirSync(dir).some((name) => name !== LOCK_FILE)) {
      throw new DatabaseStartError(
        `REGISTRY_DATA_DIR ${resolve(dir)} is not empty: restore into a new directory, or move this one away first.`,
      );
    }
    await restoreEmbedded(dir, archive).catch((error: unknown) => {
      for (const name of readdirSync(dir))
        if (name !== LOCK_FILE) rmSync(join(dir, name), { recursive: true, force: true });
      throw new DatabaseStartError(`not a backup of the embedded database (${(error as Error).message})`);
    });
    // The archive held the lock of the process that made it: the lock is this process's again.
    writeFileSync(join(dir, LOCK_FILE), lockContent(holder));
  } finally {
    release();
  }
  await (await openDatabaseExclusively(settings, holder)).close();
}
