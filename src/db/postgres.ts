import { createHash } from 'node:crypto';
import pg from 'pg';
import { batchedReads, singleReads } from './batched-reads.js';
import {
  committed,
  failureAhead,
  isDatabaseUnreachable,
  isReadOnlyRefusal,
  PLAN_PER_VALUES,
  runWork,
  streamThroughCursor,
  transactionOpened,
  withAttempts,
  type Database,
  type Queryable,
} from './database.js';
import { connectionTargets } from './connection-string.js';
import { primaryHost } from './primary-host.js';

const DATE_OID = 1082;
const INT8_OID = 20;

/** Dates stay `YYYY-MM-DD` strings and counts become numbers, as PGlite returns them. */
const types: pg.CustomTypesConfig = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === DATE_OID) return (value: string) => value;
    if (oid === INT8_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * Queries with parameters run as named prepared statements, so each connection parses a statement once and
 * PostgreSQL may reuse its plan: planning the nested JSON of a participant costs several times its execution.
 * The server's default plan_cache_mode chooses a generic plan when its *estimate* is no worse, which misjudges
 * skewed values: for an ICD holding 85 % of the participants a generic plan read 42,000 rows to sort them by
 * name where the custom plan walks the name index for 50 (900 ms against 15 ms). Statements led by
 * `PLAN_PER_VALUES` therefore run unnamed, planned for their values each time, and so do the pages in orders a
 * client chose (src/db/sql.ts).
 */
const PREPARABLE = /^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b/i;

/**
 * A connection keeps each statement it prepared until it closes, and a plan of the nested JSON can take a megabyte of
 * the backend's memory: the statements named are bounded, well above the few hundred the code writes; any further
 * one runs unnamed.
 */
const MAX_NAMED_STATEMENTS = 1000;

const statementNames = new Map<string, string>();

function statementName(sql: string, params: readonly unknown[] | undefined): string | undefined {
  if (!params?.length || sql.startsWith(PLAN_PER_VALUES)) return undefined;
  let name = statementNames.get(sql);
  if (name === undefined && PREPARABLE.test(sql) && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `registry_${createHash('sha1').update(sql).digest('base64url')}`;
    statementNames.set(sql, name);
  }
  return name;
}

export interface PostgresOptions {
  /**
   * One server, or several (`postgres://user@host1:5432,host2:5432/db?target_session_attrs=read-write`): then the
   * first that takes writes, searched again when it fails (see primary-host.ts).
   */
  connectionString: string;
  /** The schema to work in; tests give each file its own. */
  schema?: string;
  maxConnections?: number;
  /** How the connections show in pg_stat_activity. */
  applicationName?: string;
  /** A connection not made within this time fails (as unreachable); unset: no limit. */
  connectionTimeoutMs?: number;
}

const ignoreError = () => undefined;

const RECONNECT_DELAY_MS = 1000;

/** How the listening connection (one per database opened, for every channel) shows in pg_stat_activity: by the schema it serves. */
export const listenerName = (schema: string | undefined) =>
  `registry-changes ${schema?.split(',')[0] ?? ''}`.slice(0, 63);

type Listener = (payload?: string) => void;

/**
 * One connection of its own that LISTENs on every channel asked for, however many; when it is lost it connects again
 * (every second until it succeeds) and signals every listener once, without a payload, so that each reads what it may
 * have missed. Listening, stopping and connecting run one after the other, so a channel asked for meanwhile is not lost.
 */
function notificationListener(options: PostgresOptions, host: ReturnType<typeof primaryHost>) {
  const listeners = new Map<string, Set<Listener>>();
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(step: () => Promise<T>): Promise<T> => {
    const run = queue.then(step);
    queue = run.catch(ignoreError);
    return run;
  };
  const tell = (channel: string, payload?: string) => {
    for (const listener of listeners.get(channel) ?? []) listener(payload);
  };
  const tellAll = (except?: string) => {
    for (const channel of listeners.keys()) if (channel !== except) tell(channel);
  };
  const listening = (channel: string) => `LISTEN ${pg.escapeIdentifier(channel)}`;
  const reconnectLater = () => {
    retry = setTimeout(() => void serialized(reconnect), RECONNECT_DELAY_MS);
  };

  async function connect() {
    const url = await host.url();
    const next = new pg.Client({
      connectionString: url,
      options: options.schema ? `-c search_path=${options.schema}` : undefined,
      application_name: listenerName(options.schema),
    });
    next.on('error', ignoreError);
    next.on('notification', ({ channel, payload }) => tell(channel, payload));
    next.on('end', () => {
      if (client !== next) return;
      client = undefined;
      reconnectLater();
    });
    try {
      await next.connect();
      for (const channel of listeners.keys()) await next.query(listening(channel));
    } catch (error) {
      host.lost(url);
      await next.end().catch(ignoreError);
      throw error;
    }
    client = next;
  }

  async function reconnect() {
    if (client || listeners.size === 0) return;
    try {
      await connect();
      tellAll();
    } catch {
      reconnectLater();
    }
  }

  async function add(channel: string, listener: Listener) {
    const known = listeners.get(channel);
    if (known) return void known.add(listener);
    listeners.set(channel, new Set([listener]));
    try {
      if (client) return void (await client.query(listening(channel)));
      clearTimeout(retry);
      await connect();
      tellAll(channel);
    } catch (error) {
      listeners.delete(channel);
      if (!client && listeners.size > 0) reconnectLater();
      throw error;
    }
  }

  async function remove(channel: string, listener: Listener) {
    const known = listeners.get(channel);
    if (!known?.delete(listener) || known.size > 0) return;
    listeners.delete(channel);
    if (listeners.size > 0)
      return void (await client?.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(ignoreError));
    clearTimeout(retry);
    const closing = client;
    client = undefined;
    await closing?.end().catch(ignoreError);
  }

  return async (channel: string, listener: Listener): Promise<() => Promise<void>> => {
    await serialized(() => add(channel, listener));
    return () => serialized(() => remove(channel, listener));
  };
}

export function openPostgres(options: PostgresOptions): Database {
  const host = primaryHost(connectionTargets(options.connectionString));
  const listen = notificationListener(options, host);
  const pools = new Map<string, pg.Pool>();
  const connections = options.maxConnections ?? 20;
  const poolOf = (url: string) => {
    let pool = pools.get(url);
    if (pool) return pool;
    pool = new pg.Pool({
      connectionString: url,
      max: connections,
      types,
      options: options.schema ? `-c search_path=${options.schema}` : undefined,
      application_name: options.applicationName,
      connectionTimeoutMillis: options.connectionTimeoutMs,
      // A statement goes out while the one before is still answered: a transaction's first statement travels with its
      // BEGIN (see begin). A client of the pool runs one caller's statements only, so nothing else changes.
      pipeline: true,
    });
    // An idle client that loses its server must not crash the process; the next query reconnects.
    pool.on('error', ignoreError);
    pools.set(url, pool);
    return pool;
  };
  /** The pool of the host in use, and a `failed` that makes the next use search again after an error that says it is gone. */
  const current = async () => {
    const url = await host.url();
    const failed = (error: unknown) => {
      if (isDatabaseUnreachable(error) || isReadOnlyRefusal(error)) host.lost(url);
    };
    return { pool: poolOf(url), failed };
  };

  // pg types the rows `any`: the caller names their shape (Queryable.query's T), like PGlite's.
  const query = async <T>(client: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]): Promise<T[]> => {
    try {
      return (await client.query({ text: sql, values: params as unknown[], name: statementName(sql, params) })).rows;
    } catch (error) {
      // The statement's text, as PGlite's errors carry it: the log line of a failure names it (never its values).
      if (error instanceof pg.DatabaseError) Object.assign(error, { query: sql });
      throw error;
    }
  };

  /** `work`, telling `failed` of its error. */
  const reporting = async <T>(work: Promise<T>, failed: (error: unknown) => void): Promise<T> => {
    try {
      return await work;
    } catch (error) {
      failed(error);
      throw error;
    }
  };

  const queryable = (client: pg.PoolClient, failed: (error: unknown) => void): Queryable => {
    const queryClient = <T>(sql: string, params?: readonly unknown[]) =>
      reporting(query<T>(client, sql, params), failed);
    return {
      query: queryClient,
      readOne: singleReads(queryClient),
      runScript: async (sql) => void (await client.query(sql)),
    };
  };

  const queryPool = async <T>(sql: string, params?: readonly unknown[]) => {
    const { pool, failed } = await current();
    return reporting(query<T>(pool, sql, params), failed);
  };
  const top: Queryable = {
    query: queryPool,
    readOne: batchedReads(queryPool),
    runScript: async (sql) => void (await (await current()).pool.query(sql)),
  };

  async function begin(readOnly = false) {
    const { pool, failed } = await current();
    const client = await reporting(pool.connect(), failed);
    // The pool listens for errors of idle clients only: a connection lost while checked out would otherwise
    // be an uncaught error that ends the process. Its next statement fails instead, and it is discarded.
    client.on('error', ignoreError);
    // Not awaited: the work's first statement is sent behind it, saving a round trip of every transaction. BEGIN fails
    // only with its connection, and then so does every statement sent behind it; its error is the transaction's.
    const begun = client.query(readOnly ? 'BEGIN READ ONLY' : 'BEGIN').then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    const tx = transactionOpened(queryable(client, failed));
    const done = async (failedWork: boolean) => {
      const beginning = await begun;
      let command: string;
      try {
        if (beginning) throw beginning.error;
        // Sent behind the statements sent ahead (`sentAhead`); after a failed one, PostgreSQL answers COMMIT by rolling back.
        ({ command } = await client.query(failedWork ? 'ROLLBACK' : 'COMMIT'));
      } catch (error) {
        failed(error);
        client.release(true);
        if (failedWork) return;
        throw error;
      }
      client.off('error', ignoreError);
      client.release();
      if (failedWork) return;
      const failure = await failureAhead(tx);
      if (failure) throw failure.error;
      if (command !== 'COMMIT') throw new Error(`the transaction ended with ${command}`);
    };
    return { tx, done };
  }

  async function runTransaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const { tx, done } = await begin();
    let result: T;
    try {
      result = await runWork(tx, work);
    } catch (error) {
      await done(true);
      throw error;
    }
    await done(false);
    await committed(tx, top);
    return result;
  }

  return {
    kind: 'postgres',
    connections,
    ...top,
    transaction: (work) => withAttempts(() => runTransaction(work)),
    stream: (sql, params = [], batchSize = 1000, maxBytes) =>
      streamThroughCursor(() => begin(true), sql, params, batchSize, maxBytes),
    stats() {
      const all = [...pools.values()];
      const sum = (count: (pool: pg.Pool) => number) => all.reduce((total, pool) => total + count(pool), 0);
      return {
        total: sum((pool) => pool.totalCount),
        idle: sum((pool) => pool.idleCount),
        waiting: sum((pool) => pool.waitingCount),
      };
    },
    listen,
    close: async () => void (await Promise.all([...pools.values()].map((pool) => pool.end()))),
  };
}
