import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCodeOf } from '../core/errors.js';
import type { Database } from './database.js';
import { openEmbedded } from './embedded.js';
import { migrate } from './migrate.js';
import { openPostgres } from './postgres.js';
import { ConnectionStringError, serverNames } from './connection-string.js';
import { NoPrimaryError } from './primary-host.js';

export interface DatabaseSettings {
  DATABASE_URL?: string;
  REGISTRY_DATA_DIR: string;
  /** How long to wait for a PostgreSQL server that does not answer yet, in seconds; default 0 (not at all). */
  DATABASE_WAIT_SECONDS?: number;
}

export interface OpenOptions {
  /** Told while waiting for PostgreSQL: why it does not answer yet, and how many seconds the wait has left. */
  onWait?: (reason: string, remainingSeconds: number) => void;
  /** false: the migrations are left to the caller (`registry migrate`, which lists what it applies). */
  migrate?: boolean;
}

/**
 * What keeps the registry from its database that the operator must change or start: the message says what is wrong
 * and what would do, in one line, without the database's password.
 */
export class DatabaseStartError extends Error {}

/** Failures of a server that is not up yet (or not reachable yet): a start waits them out for a while. */
const NOT_UP_YET = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  '57P03',
  '53300',
]);
const TELL_EVERY_MS = 10_000;

/** Why the server does not answer, in a few words: its error code, else its message; of a search among several hosts, what each said. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof NoPrimaryError ? message : (errorCodeOf(error) ?? message);
}

/** A host of a multi-host DATABASE_URL may be starting, or be promoted, as a single server may be starting. */
const notUpYet = (error: unknown) =>
  error instanceof NoPrimaryError ||
  NOT_UP_YET.has(errorCodeOf(error) ?? '') ||
  /Connection terminated/i.test(reasonOf(error));

const WAIT_ADVICE = 'correct DATABASE_URL; DATABASE_WAIT_SECONDS sets how long a start waits for it.';

/** The start's line once the wait is over: the hosts of a multi-host DATABASE_URL name themselves in its reason. */
function stillNotAnswering(error: unknown, where: string, waitSeconds: number): DatabaseStartError {
  const waited = waitSeconds > 0 ? `, waited ${waitSeconds} s` : '';
  if (error instanceof NoPrimaryError)
    return new DatabaseStartError(
      `${reasonOf(error)}${waited}. Start its primary (or promote a standby), or ${WAIT_ADVICE}`,
    );
  return new DatabaseStartError(
    `${where} does not answer (${reasonOf(error)})${waited}. Start PostgreSQL or ${WAIT_ADVICE}`,
  );
}

/** What a refusal of the PostgreSQL server means for the operator; the error as it was when it is none of those. */
function refusal(error: unknown, where: string): unknown {
  const message = error instanceof Error ? error.message : String(error);
  switch (errorCodeOf(error)) {
    case '3D000':
      return new DatabaseStartError(`${where}: ${message}. Create it (createdb), or correct DATABASE_URL.`);
    case '28P01':
    case '28000':
      return new DatabaseStartError(
        `${where}: the server refused the connection (${message}). Correct the user or password in DATABASE_URL, or the server's pg_hba.conf.`,
      );
    case '42501':
      return new DatabaseStartError(
        `${where}: ${message}. The user of DATABASE_URL must be allowed to create tables in its schema (it applies the migrations).`,
      );
    case '58P01':
    case '0A000':
      return new DatabaseStartError(
        `${where}: ${message}. The registry needs the pg_trgm extension (Debian: the postgresql-contrib package).`,
      );
    default:
      return error;
  }
}

/** Asks the server until it answers, for at most `waitSeconds`; a refusal that waiting cannot cure ends at once. */
async function untilAnswering(
  db: Database,
  where: string,
  waitSeconds: number,
  onWait: NonNullable<OpenOptions['onWait']>,
): Promise<void> {
  const deadline = Date.now() + waitSeconds * 1000;
  let toldAt = 0;
  for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 2000)) {
    try {
      await db.query('SELECT 1');
      return;
    } catch (error) {
      if (!notUpYet(error)) throw refusal(error, where);
      const remainingMs = deadline - Date.now();
      if (remainingMs <= 0) throw stillNotAnswering(error, where, waitSeconds);
      if (Date.now() - toldAt >= TELL_EVERY_MS) {
        toldAt = Date.now();
        onWait(reasonOf(error), Math.ceil(remainingMs / 1000));
      }
      await sleep(Math.min(delayMs, remainingMs));
    }
  }
}

/** A data directory this user cannot make or write (EACCES, EROFS, ENOTDIR, ...): the operator's to fix. */
export function unusableDataDirectory(dir: string, error: unknown): DatabaseStartError {
  return new DatabaseStartError(
    `REGISTRY_DATA_DIR ${resolve(dir)} cannot be used (${reasonOf(error)}): name a directory this user may create and write.`,
  );
}

/** The embedded database's directory, made if need be. */
function dataDirectory(dir: string): string {
  try {
    mkdirSync(dir, { recursive: true });
    return dir;
  } catch (error) {
    throw unusableDataDirectory(dir, error);
  }
}

/** The database the settings name, as the command line tells it before it opens it: never the user or password. */
export function databaseNamed(settings: DatabaseSettings): string {
  return settings.DATABASE_URL
    ? `PostgreSQL at ${serverNames(settings.DATABASE_URL)}`
    : `the embedded database in ${resolve(settings.REGISTRY_DATA_DIR)}`;
}

/**
 * PostgreSQL when DATABASE_URL is set (waited for up to DATABASE_WAIT_SECONDS when it does not answer yet), else the
 * embedded PostgreSQL in REGISTRY_DATA_DIR; migrated unless `options.migrate` is false.
 */
export async function openDatabase(settings: DatabaseSettings, options: OpenOptions = {}): Promise<Database> {
  const url = settings.DATABASE_URL;
  const db = url
    ? openPostgres({ connectionString: url })
    : await openEmbedded(dataDirectory(settings.REGISTRY_DATA_DIR));
  const where = url ? databaseNamed(settings) : undefined;
  try {
    if (where)
      await untilAnswering(db, where, settings.DATABASE_WAIT_SECONDS ?? 0, options.onWait ?? (() => undefined));
    if (options.migrate !== false) await migrate(db);
  } catch (error) {
    await db.close();
    throw where ? refusal(error, where) : error;
  }
  return db;
}

/** How the standbys' connections show in their pg_stat_activity. */
export const STANDBY_APPLICATION_NAME = 'registry-reads';

/**
 * The hot standbys DATABASE_READ_URLS names (connection strings separated by commas or spaces), each named by its host
 * and database (never its credentials); none without the setting. Not migrated: they replay the primary.
 */
export function openStandbys(settings: {
  DATABASE_URL?: string;
  DATABASE_READ_URLS?: string;
}): Array<{ name: string; db: Database }> {
  if (!settings.DATABASE_READ_URLS) return [];
  if (!settings.DATABASE_URL) {
    throw new ConnectionStringError(
      'DATABASE_READ_URLS names hot standbys of a PostgreSQL primary: set DATABASE_URL to that primary (the embedded database has no standbys)',
    );
  }
  const urls = settings.DATABASE_READ_URLS.split(/[\s,]+(?=postgres(?:ql)?:\/\/)/i)
    .map((url) => url.trim())
    .filter((url) => url !== '');
  return urls.map((url) => ({
    name: serverNames(url, 'DATABASE_READ_URLS'),
    db: openPostgres({ connectionString: url, applicationName: STANDBY_APPLICATION_NAME, connectionTimeoutMs: 5000 }),
  }));
}
