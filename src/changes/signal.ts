import type { Database } from '../db/database.js';
import { appendedChanges, numberChanges, type ChangeNotice } from '../db/change-log.js';

type ChangeListener = (notice: ChangeNotice) => void;

/**
 * Tells the caches of this instance about every committed change, in log order, once each. The change log is
 * the truth: a signal (NOTIFY from any instance on the same PostgreSQL database, in-process on the embedded
 * one, a reconnection, the safety poll, or a write of this instance) only makes it read the log after the
 * last position it told, so a lost notification delays a notice but never drops it.
 */
export interface ChangeSignal {
  /** Calls `listener` with every change committed from now on; returns the function that stops it. */
  subscribe(listener: ChangeListener): () => void;
  /** Reads the log after the last position told and tells the listeners; resolves when they have heard. */
  catchUp(): Promise<void>;
  /** The last position told. */
  readonly position: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every committed change, from the change log: caches subscribe here (`app.changes.subscribe`). */
    changes: ChangeSignal;
  }
}

const CHANGES_CHANNEL = 'registry_changes';

/**
 * Runs `work` one call at a time; a call while one runs asks for one more run after it, never more (calls
 * meanwhile share that run). Resolves when a run that started after the call has finished.
 */
export function coalesced(work: () => Promise<void>, onError: (error: unknown) => void = () => undefined) {
  let queued: Promise<void> | undefined;
  let tail: Promise<void> = Promise.resolve();
  return {
    run(): Promise<void> {
      if (queued) return queued;
      const next = tail.then(() => {
        queued = undefined;
        return work();
      });
      queued = next;
      tail = next.catch(onError);
      return next;
    },
    /** Resolves when the runs asked for so far have ended. */
    settled: () => tail,
  };
}
const BATCH = 1000;

export interface ChangeSignalOptions {
  /** How often the log is read without a signal, in case a listening connection died unnoticed. */
  pollMs?: number;
  /** A listener that throws; the others still hear the change. */
  onListenerError?: (error: unknown) => void;
}

export function changeSignal(db: Database, options: ChangeSignalOptions = {}): ChangeSignal {
  const listeners = new Set<ChangeListener>();
  let position = 0;
  let started = false;
  let stopListening: (() => Promise<void>) | undefined;
  let poll: NodeJS.Timeout | undefined;

  async function readNew(): Promise<void> {
    for (;;) {
      const rows = await db.query<ChangeNotice>(
        'SELECT seq, resource, identifier, operation FROM change_log WHERE seq > $1 ORDER BY seq LIMIT $2',
        [position, BATCH],
      );
      for (const notice of rows) {
        position = notice.seq;
        tell(notice);
      }
      if (rows.length < BATCH) return;
    }
  }

  function tell(notice: ChangeNotice): void {
    for (const listener of listeners) {
      try {
        listener(notice);
      } catch (error) {
        options.onListenerError?.(error);
      }
    }
  }

  // Reads run one after the other; a signal during a read asks for one more read after it, never more.
  const read = coalesced(readNew);
  const catchUp = () => (started ? read.run() : Promise.resolve());

  const signalled = () => void catchUp().catch(() => undefined);
  // Writers number their own entries after commit; the poll numbers those of a writer that died in between (or
  // whose numbering failed), then reads, in case the listening connection died unnoticed.
  const polled = () => void numberChanges(db).then(catchUp).catch(() => undefined);

  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    catchUp,
    get position() {
      return position;
    },
    async start() {
      if (started) return;
      // What committed before the start is in no cache yet: the listeners hear what follows.
      await numberChanges(db);
      const [row] = await db.query<{ seq: number }>('SELECT seq FROM change_log_position');
      position = row?.seq ?? 0;
      started = true;
      stopListening = await db.listen(CHANGES_CHANNEL, signalled);
      poll = setInterval(polled, options.pollMs ?? 10_000);
      poll.unref();
    },
    async stop() {
      started = false;
      clearInterval(poll);
      await stopListening?.();
      await read.settled();
    },
  };
}

/**
 * The database as the application uses it: once a transaction that appended a change has committed, the
 * caches of this instance hear it before the caller goes on (a user changed is refused from the next request).
 */
export function catchingUpAfterWrites(db: Database, signal: ChangeSignal): Database {
  return {
    ...db,
    async transaction(work) {
      let used: Parameters<typeof work>[0] | undefined;
      const result = await db.transaction((tx) => {
        used = tx;
        return work(tx);
      });
      // The write is committed whatever happens here; a failed read is made good by the next signal.
      if (used && appendedChanges(used)) await signal.catchUp().catch(() => undefined);
      return result;
    },
  };
}
