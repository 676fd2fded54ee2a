import type { Database } from './database.js';
import { appendedChanges, numberChanges, type ChangeNotice } from './change-log.js';
import { coalesced } from '../core/concurrency.js';

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
  /**
   * Calls `listener` when the log is no longer the one told (after a failover that lost its last entries, the new
   * primary numbers new ones at positions already told): anything held may be stale. Returns the function that stops it.
   */
  onReset(listener: () => void): () => void;
  /** Reads the log after the last position told and tells the listeners; resolves when they have heard. */
  catchUp(): Promise<void>;
  /** The last position told. */
  readonly position: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const CHANGES_CHANNEL = 'registry_changes';

/** Calls every listener with `argument`; one that throws (said to `onError`) does not keep the others from hearing. */
export function tellEach<A>(
  listeners: Iterable<(argument: A) => void>,
  argument: A,
  onError?: (error: unknown) => void,
): void {
  for (const listener of listeners) {
    try {
      listener(argument);
    } catch (error) {
      onError?.(error);
    }
  }
}

const BATCH = 1000;

export interface ChangeSignalOptions {
  /** How often the log is read without a signal, in case a listening connection died unnoticed. */
  pollMs?: number;
  /**
   * The log of a hot standby, as it has replayed it: read-only and without NOTIFY, so the signal neither numbers nor
   * listens nor polls; its owner calls `catchUp` (db/replication.ts).
   */
  standby?: boolean;
  /** A listener that throws; the others still hear the change. */
  onListenerError?: (error: unknown) => void;
}

/**
 * The mark of the entry at a position: its id and the time of its transaction. A new primary after a failover that
 * lost entries may give a new entry a lost one's position, and even its id (a sequence's advance can be lost too),
 * never both with its time.
 */
const markOf = (entry: string) => `${entry}.id || ':' || extract(epoch FROM ${entry}.changed_at)`;

/** A read of the log: its last position, the mark of the entry at the signal's (`told`), and one entry after it (null when none). */
interface ReadRow extends Omit<ChangeNotice, 'seq'> {
  last: number;
  told: string | null;
  mark: string;
  seq: number | null;
}

export function changeSignal(db: Database, options: ChangeSignalOptions = {}): ChangeSignal {
  const listeners = new Set<ChangeListener>();
  const resetListeners = new Set<() => void>();
  let position = 0;
  /** The mark of the entry at `position`: another entry there means the log was replaced under the signal (a failover). */
  let toldMark: string | null = null;
  let started = false;
  let stopListening: (() => Promise<void>) | undefined;
  let poll: NodeJS.Timeout | undefined;

  /** The entries after the position, with the log's last position and the entry at ours, from one snapshot. */
  const readAfterPosition = () =>
    db.query<ReadRow>(
      `SELECT p.seq AS last, (SELECT ${markOf('t')} FROM change_log t WHERE t.seq = $1 AND $1 > 0) AS told, ${markOf('c')} AS mark,
            c.seq, c.resource, c.identifier, c.operation, c.user_id AS "userId", c.acting_provider_id AS "actingProviderId"
       FROM change_log_position p
       LEFT JOIN LATERAL (SELECT * FROM change_log WHERE seq > $1 ORDER BY seq LIMIT $2) c ON true`,
      [position, BATCH],
    );

  async function readNew(): Promise<void> {
    for (;;) {
      const rows = await readAfterPosition();
      const [first] = rows;
      if (!first) return;
      if (first.last < position || (toldMark !== null && first.told !== toldMark)) {
        replaced(first.last);
        continue;
      }
      toldMark = first.told;
      let told = 0;
      for (const { last: _last, told: _told, mark, seq, ...notice } of rows) {
        if (seq === null) continue;
        position = seq;
        toldMark = mark;
        told += 1;
        tell({ seq, ...notice });
      }
      if (told < BATCH) return;
    }
  }

  /** Starts again from the log's end as it is now, and tells that anything heard before may be stale. */
  function replaced(last: number): void {
    position = last;
    toldMark = null;
    tellEach(resetListeners, undefined, options.onListenerError);
  }

  const tell = (notice: ChangeNotice) => tellEach(listeners, notice, options.onListenerError);

  // Reads run one after the other; a signal during a read asks for one more read after it, never more.
  const read = coalesced(readNew);
  const catchUp = () => (started ? read.run() : Promise.resolve());

  const signalled = () => void catchUp().catch(() => undefined);
  // Writers number their own entries after commit; the poll numbers those of a writer that died in between (or
  // whose numbering failed), then reads, in case the listening connection died unnoticed.
  const polled = () =>
    void numberChanges(db)
      .then(catchUp)
      .catch(() => undefined);

  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onReset(listener) {
      resetListeners.add(listener);
      return () => resetListeners.delete(listener);
    },
    catchUp,
    get position() {
      return position;
    },
    async start() {
      if (started) return;
      // What committed before the start is in no cache yet: the listeners hear what follows.
      if (!options.standby) await numberChanges(db);
      const [row] = await db.query<{ seq: number; mark: string | null }>(
        `SELECT p.seq, (SELECT ${markOf('c')} FROM change_log c WHERE c.seq = p.seq) AS mark FROM change_log_position p`,
      );
      position = row?.seq ?? 0;
      toldMark = row?.mark ?? null;
      started = true;
      if (options.standby) return;
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
