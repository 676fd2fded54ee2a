import { PGlite, types as pgliteTypes, type Transaction } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { batchedReads, singleReads } from './batched-reads.js';
import { withRelativeNames } from './tar-names.js';
import {
  committed,
  failureAhead,
  runWork,
  streamThroughCursor,
  transactionOpened,
  withAttempts,
  type Database,
  type Queryable,
} from './database.js';

/**
 * What the embedded database promises, said at start-up. PGlite writes its files through Node's fs on every
 * commit, so a commit survives the process being killed (the durability test kills it with SIGKILL), but its
 * file system layer never calls fsync: the operating system may still hold the last commits in memory.
 */
export const EMBEDDED_DURABILITY =
  'embedded database: a commit survives a crash or kill of this process, but is not forced to disk (no fsync): ' +
  'an operating system crash or power loss can lose the last seconds of commits. Set DATABASE_URL (PostgreSQL) ' +
  'where that matters.';

const EXTENSIONS = { pg_trgm };

/**
 * The embedded PostgreSQL (PGlite): one connection in this process. Its queries run one at a time, and a
 * query sent while a transaction is open waits for that transaction to end. In memory without `dataDir`; made from
 * an archive that `dump` made with `archive`.
 */
export async function openEmbedded(dataDir?: string, archive?: Blob): Promise<Database> {
  const db = await PGlite.create(dataDir, {
    extensions: EXTENSIONS,
    ...(archive ? { loadDataDir: archive } : {}),
    parsers: { [pgliteTypes.DATE]: (value: string) => value, [pgliteTypes.INT8]: (value: string) => Number(value) },
  });

  const queryable = (target: PGlite | Transaction): Queryable => {
    const query = async <T>(sql: string, params?: readonly unknown[]) =>
      (await target.query<T>(sql, params as unknown[])).rows;
    return { query, readOne: singleReads(query), runScript: async (sql) => void (await target.exec(sql)) };
  };

  /** Holds PGlite's transaction open until `done` is called, for the cursor of a stream. */
  function begin() {
    return new Promise<{ tx: Queryable; done: (failed: boolean) => Promise<void> }>((opened, failedToOpen) => {
      const finished = Promise.withResolvers<boolean>();
      const transaction = db
        .transaction(async (tx) => {
          opened({ tx: queryable(tx), done });
          if (await finished.promise) await tx.rollback();
        })
        .catch(failedToOpen);
      async function done(failed: boolean) {
        finished.resolve(failed);
        await transaction;
      }
    });
  }

  // Operations started and not yet finished: the first holds the one connection, the others wait for it.
  let inFlight = 0;
  const tracked = <T>(work: () => Promise<T>): Promise<T> => {
    inFlight += 1;
    return work().finally(() => (inFlight -= 1));
  };
  const topLevel = queryable(db);
  const topLevelQuery = <T>(sql: string, params?: readonly unknown[]) => tracked(() => topLevel.query<T>(sql, params));

  return {
    kind: 'embedded',
    connections: 1,
    query: topLevelQuery,
    readOne: batchedReads(topLevelQuery),
    runScript: (sql) => tracked(() => topLevel.runScript(sql)),
    transaction: (work) =>
      tracked(() =>
        withAttempts(async () => {
          let used: Queryable | undefined;
          const result = await db.transaction(async (tx) => {
            const opened = (used = transactionOpened(queryable(tx)));
            const done = await runWork(opened, work);
            const failure = await failureAhead(opened);
            if (failure) throw failure.error;
            return done;
          });
          if (used) await committed(used, topLevel);
          return result;
        }),
      ),
    stats: () => ({ total: 1, idle: inFlight === 0 ? 1 : 0, waiting: Math.max(0, inFlight - 1) }),
    stream: (sql, params = [], batchSize = 1000, maxBytes) =>
      streamThroughCursor(begin, sql, params, batchSize, maxBytes),
    listen: async (channel, onSignal) => {
      const stop = await db.listen(channel, (payload) => onSignal(payload));
      return () => stop();
    },
    dump: () =>
      tracked(
        async () =>
          new Blob(
            [await gzipped(withRelativeNames(new Uint8Array(await (await db.dumpDataDir('none')).arrayBuffer())))],
            { type: 'application/x-gzip' },
          ),
      ),
    close: () => db.close(),
  };
}

const gzipped = promisify(gzip);

/** Makes `dataDir` (new or empty) the database of an archive that `dump` made. */
export async function restoreEmbedded(dataDir: string, archive: Blob): Promise<void> {
  await (await PGlite.create(dataDir, { extensions: EXTENSIONS, loadDataDir: archive })).close();
}
