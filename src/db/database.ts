import { setTimeout as delay } from 'node:timers/promises';
import { errorCodeOf } from '../core/errors.js';

/** What the resources need of a database: PostgreSQL through `pg` and the embedded PGlite both provide it. */
export type Row = Record<string, unknown>;

/**
 * Leads a statement whose best plan depends on its values (a filtered search over skewed data: one ICD holding most
 * participants, say): PostgreSQL then plans it for each execution instead of reusing a prepared, generic plan.
 */
export const PLAN_PER_VALUES = '/* planned per values */';

/** The SQLSTATE of a change log entry naming process states the database does not have (migration 071). */
export const CHANGE_LOG_STATES_MISSING = 'RG001';

/**
 * A read of one row at most (none: not found) that concurrent callers may share one statement for: its SQL with
 * parameters `$1`…`$n`, and each parameter's type. Made once, as a module constant: the database keeps a batcher per
 * read.
 */
export interface BatchableRead {
  readonly sql: string;
  /** The same read for many parameter lists at once: each row carries `batch_ordinal`, the list's place (from 1). */
  readonly batched: string;
}

/** The row of `read` for `params`, or undefined when there is none. */
export type ReadOne = <T = Row>(read: BatchableRead, params: readonly unknown[]) => Promise<T | undefined>;

export interface Queryable {
  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** The row of a read (`batchableRead`) for `params`, or undefined; outside a transaction, reads made meanwhile share a statement. */
  readOne: ReadOne;
  /** Runs a script of several statements without parameters (migrations). */
  runScript(sql: string): Promise<void>;
}

type CommitCallback = (db: Queryable) => Promise<void>;
const commitCallbacks = new WeakMap<Queryable, Map<string, CommitCallback>>();

/**
 * Runs `callback` on the database once the transaction `tx` has committed (not if it rolls back), before the
 * `transaction()` that opened it resolves. One callback per `key` and transaction: later registrations are ignored.
 * On a Queryable that is no transaction nothing runs. The callback handles its own errors.
 */
export function afterCommit(tx: Queryable, key: string, callback: CommitCallback): void {
  let callbacks = commitCallbacks.get(tx);
  if (!callbacks) commitCallbacks.set(tx, (callbacks = new Map()));
  if (!callbacks.has(key)) callbacks.set(key, callback);
}

/** For the drivers: `tx` has committed; runs its `afterCommit` callbacks on `db`. */
export async function committed(tx: Queryable, db: Queryable): Promise<void> {
  for (const callback of commitCallbacks.get(tx)?.values() ?? []) await callback(db);
}

type Settled = { error: unknown } | undefined;
const statementsAhead = new WeakMap<Queryable, Promise<Settled>[]>();

/** For the drivers: `tx` is an open transaction, so statements may be sent in it ahead of their answers (`sentAhead`). */
export function transactionOpened(tx: Queryable): Queryable {
  statementsAhead.set(tx, []);
  return tx;
}

/**
 * Lets transaction `tx` go on without waiting for `statement`'s answer: it is settled with the transaction's commit,
 * and its failure fails the transaction (the database rolls back a transaction a statement failed in). Outside a
 * transaction the statement is awaited. On PostgreSQL the commit is then sent behind it, saving a round trip.
 */
export async function sentAhead(tx: Queryable, statement: Promise<unknown>): Promise<void> {
  const ahead = statementsAhead.get(tx);
  if (!ahead) return void (await statement);
  ahead.push(
    statement.then(
      () => undefined,
      (error: unknown) => ({ error }),
    ),
  );
}

/** Whether statements sent in `tx` may be settled at its commit (`sentAhead`): it is an open transaction. */
export const sendsAhead = (tx: Queryable) => statementsAhead.has(tx);

/**
 * For the drivers: `work` in transaction `tx`. A statement sent ahead that failed makes every later one fail as
 * aborted: its failure, the cause, is the one thrown.
 */
export async function runWork<T>(tx: Queryable, work: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    return await work(tx);
  } catch (error) {
    throw (await failureAhead(tx))?.error ?? error;
  }
}

/** For the drivers: the first failure among the statements sent ahead in `tx`, once all are answered. */
export async function failureAhead(tx: Queryable): Promise<Settled> {
  const settled = await Promise.all(statementsAhead.get(tx) ?? []);
  return settled.find((failure) => failure !== undefined);
}

/**
 * A deadlock or a serialization failure aborts one of the transactions involved (two admins editing linked
 * catalogue rows in opposite order, say); PostgreSQL's prescribed remedy is to run it again. So is a change log
 * entry naming process states the database lacks (migration 071): its next attempt sends them.
 */
const RUN_AGAIN = new Set(['40P01', '40001', CHANGE_LOG_STATES_MISSING]);
const MAX_ATTEMPTS = 3;
/**
 * Run again at once, the loser can take its first row back before the winner has woken from waiting for it, and
 * the two deadlock again (seen once in CI): the loser waits first, 10 to 20 ms and then 20 to 40, long enough for
 * the winner to wake and take the row, and at random so that two losers do not come back in step.
 */
const RETRY_PAUSE_MS = 20;
const pauseBeforeAttempt = (attempt: number) => delay((0.5 + Math.random() / 2) * RETRY_PAUSE_MS * 2 ** (attempt - 2));

/** For the drivers: `attempt` run again, after a pause, as long as it fails with an error that says to. */
export async function withAttempts<T>(attempt: () => Promise<T>): Promise<T> {
  for (let count = 1; ; count += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (count >= MAX_ATTEMPTS || !RUN_AGAIN.has(errorCodeOf(error) ?? '')) throw error;
    }
    await pauseBeforeAttempt(count + 1);
  }
}

export interface Database extends Queryable {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Reads the rows of `sql` through a cursor, batch by batch, so memory stays flat whatever the row count. Handed
   * out by batch: one step of async iteration per row cost a stream more than the row's serialization. With
   * `maxBytes`, a batch also stops before its rows (as text) pass that many bytes, one row at least: for rows
   * that may be large.
   */
  stream<T = Row>(sql: string, params?: readonly unknown[], batchSize?: number, maxBytes?: number): AsyncIterable<T[]>;
  readonly kind: 'postgres' | 'embedded';
  /** The statements it runs at once at most: its pool's connections (1 on the embedded database). */
  readonly connections: number;
  /**
   * Calls `onSignal` with its payload for every notification on `channel` (PostgreSQL LISTEN, one connection for
   * every channel; in-process on the embedded database), and without one once after each reconnection, when
   * notifications may have been missed. Resolves when listening, to the function that stops it.
   */
  listen(channel: string, onSignal: (payload?: string) => void): Promise<() => Promise<void>>;
  /** Connection use, for the metrics. */
  stats?(): PoolStats;
  /**
   * The embedded database only: its whole data directory as one gzipped tar (PGlite's dump, made while no statement
   * runs), for `registry backup`; PostgreSQL has pg_dump.
   */
  dump?(): Promise<Blob>;
  close(): Promise<void>;
}

/** Open connections, the idle ones among them, and callers queued for one. */
interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** The most bytes of rows a batch of a stream of large rows reads (as a page of the change feed carries): 4 MiB. */
export const STREAM_BATCH_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The row counts a byte-bounded batch may take, largest first: the batch size, then quarters of it. Each is one
 * window function per row, so a few coarse steps measure the rows at less cost than many fine ones.
 */
function batchSteps(batchSize: number): number[] {
  const steps = [batchSize];
  for (let step = batchSize >> 2; step > 1; step >>= 2) steps.push(step);
  return steps;
}

/**
 * `sql` with two columns more: `stream_bytes`, the bytes (as text) of its rows up to this one, and `stream_next`,
 * how many rows the next batch takes after this one (0 after the last): the largest step whose rows stay within
 * the budget (the placeholder `budget`), else 1. A FETCH cannot stop at a size, so the rows read say where to stop.
 */
function measuredSql(sql: string, budget: string, batchSize: number) {
  const steps = batchSteps(batchSize).map(
    (step) => `WHEN lead(stream_bytes, ${step}) OVER ahead - stream_bytes <= ${budget} THEN ${step}`,
  );
  return `SELECT measured.*, CASE WHEN lead(stream_bytes) OVER ahead IS NULL THEN 0 ${steps.join(' ')} ELSE 1 END AS stream_next
            FROM (SELECT r.*, sum(octet_length(r::text)) OVER (ROWS UNBOUNDED PRECEDING) AS stream_bytes FROM (${sql}) r) measured
          WINDOW ahead AS ()`;
}

interface Measured {
  stream_bytes: number;
  stream_next: number;
}

/** A cursor-based reader over any transaction; both drivers share it, so there is one streaming path. */
export async function* streamThroughCursor<T>(
  open: () => Promise<{ tx: Queryable; done: (failed: boolean) => Promise<void> }>,
  sql: string,
  params: readonly unknown[],
  batchSize: number,
  maxBytes?: number,
): AsyncGenerator<T[]> {
  const measured = maxBytes !== undefined;
  const { tx, done } = await open();
  let failed = true;
  try {
    await tx.query(
      `DECLARE registry_stream NO SCROLL CURSOR FOR ${measured ? measuredSql(sql, `$${params.length + 1}`, batchSize) : sql}`,
      measured ? [...params, maxBytes] : params,
    );
    const fetch = (count: number) => {
      const next = tx.query<T & Partial<Measured>>(`FETCH ${count} FROM registry_stream`);
      next.catch(() => undefined); // awaited below; a consumer that stops early must not leave it unhandled
      return next;
    };
    // Until a row says how many of the next fit, a measured stream reads one.
    // The next batch is asked for before this one is handed out, so the database works while the rows are sent.
    let pending = fetch(measured ? 1 : batchSize);
    for (;;) {
      const rows = await pending;
      const next = measured ? (rows.at(-1)?.stream_next ?? 0) : rows.length === batchSize ? batchSize : 0;
      if (next > 0) pending = fetch(next);
      if (rows.length > 0)
        yield measured ? rows.map(({ stream_bytes: _bytes, stream_next: _next, ...row }) => row as T) : rows;
      if (next === 0) break;
    }
    failed = false;
  } finally {
    await done(failed);
  }
}

/** SQLSTATE codes the data layer turns into API errors. */
const SqlState = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
} as const;

const onSqlState =
  (state: string) =>
  async <T>(work: Promise<T>, conflict: () => Error): Promise<T> => {
    try {
      return await work;
    } catch (error) {
      throw errorCodeOf(error) === state ? conflict() : error;
    }
  };

/** Errors of a database that cannot be reached (refused, cut or shut down), as opposed to a failing statement. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
]);
const UNREACHABLE_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/i;

export function isDatabaseUnreachable(error: unknown): boolean {
  const code = errorCodeOf(error);
  if (code && (UNREACHABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return error instanceof Error && UNREACHABLE_MESSAGES.test(error.message);
}

/**
 * A write refused because the server is read-only (SQLSTATE 25006): a standby, or a primary demoted under the
 * registry. Like an unreachable database, it passes once the connection reaches the primary again.
 */
export const isReadOnlyRefusal = (error: unknown) => errorCodeOf(error) === '25006';

/** Turns the unique violation of a race lost to another request into the conflict it is. */
export const onUniqueViolation = onSqlState(SqlState.uniqueViolation);
/** Turns a link to a row that another request deleted meanwhile into a conflict. */
export const onForeignKeyViolation = onSqlState(SqlState.foreignKeyViolation);
