import { isDatabaseUnreachable, type Database } from './database.js';
import { singleReads } from './batched-reads.js';
import type { ChangeNotice } from './change-log.js';
import { changeSignal, tellEach, type ChangeSignal } from './change-signal.js';

/** A hot standby of the primary the registry reads from (DATABASE_READ_URLS), named as status and metrics show it. */
export interface StandbyDatabase {
  name: string;
  db: Database;
}

export interface ReplicationOptions {
  /** A standby whose replay is behind the primary's log by more than this is taken out of rotation (default 5 s). */
  maxLagMs?: number;
  /** How often the primary and each standby are asked whether they answer, and each standby's log is read (1 s). */
  checkMs?: number;
  /** A standby changed state (into or out of rotation, promoted, unreachable): for the log. */
  onStateChange?: (standby: StandbyStatus) => void;
  /** A check of a standby failed otherwise than by not answering (a standby not yet migrated, say). */
  onError?: (error: unknown) => void;
  /** A listener of the reads' change signal threw; the others still heard the change. */
  onListenerError?: (error: unknown) => void;
}

export type StandbyState = 'in rotation' | 'lagging' | 'unreachable' | 'promoted';

export interface StandbyStatus {
  name: string;
  state: StandbyState;
  /** How far its replay is behind the primary's log, in seconds (null while unreachable). */
  lagSeconds: number | null;
  /** Whether the reads of standby routes go to it now. */
  reading: boolean;
  /** Queries it has answered for this process. */
  reads: number;
}

export interface ReplicationStatus {
  /** Whether the primary answered its last check. */
  primary: boolean;
  standbys: StandbyStatus[];
}

/** Who read-your-writes is kept for: a user, and the provider it acts for. */
export interface Reader {
  userId: string;
  serviceProviderId: string | null;
  accessPointProviderId: string | null;
}

/** How long one check of a server may take before it counts as not answering. */
const CHECK_TIMEOUT_MS = 2000;
/** The first wait before a standby that is behind the primary's log is read again; doubled up to `checkMs`. */
const FIRST_CHASE_MS = 5;
/** Times the primary's log was heard at: one per this many milliseconds is precise enough for the lag. */
const HEARD_RESOLUTION_MS = 10;
const MAX_HEARD = 10_000;
/** The users and providers whose last write is remembered until every standby shows it. */
const MAX_PENDING_WRITERS = 100_000;

/** Resolves to what `work` gives, or rejects when it takes longer than `ms`. */
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** One standby: its log as it has replayed it (a change signal of its own), and what its checks found. */
class Follower {
  readonly signal: ChangeSignal;
  started = false;
  reachable = false;
  recovering = true;
  reads = 0;
  chasing = false;
  state: StandbyState = 'unreachable';

  constructor(
    readonly standby: StandbyDatabase,
    onListenerError?: (error: unknown) => void,
  ) {
    this.signal = changeSignal(standby.db, { standby: true, onListenerError });
  }
}

/**
 * The registry's hot standbys (DATABASE_READ_URLS): which one the standby routes read from, the log it follows for the
 * caches of those reads, read-your-writes, and the status that readiness and the metrics show.
 *
 * Each standby's log is read as the standby has replayed it (a standby has no NOTIFY): every `checkMs`, and at once
 * when the primary's signal tells a change it has not shown yet, then again after 5 ms, 10 ms, ... until it has. Its
 * lag is the age of the oldest change the primary's signal heard that the standby does not show yet (0 when it shows
 * them all, whatever its WAL position: what a reader misses is what counts). The reads go to the first standby, in
 * the configured order, that answers, is in recovery and lags no more than `maxLagMs`; with none, to the primary.
 * While the primary does not answer, any standby that answers keeps the reads (the one that shows the most, if none is
 * within the bound): it shows everything there is to read.
 */
export class Replication {
  private readonly followers: Follower[];
  private readonly maxLagMs: number;
  private readonly checkMs: number;
  /** (position, when the primary's signal heard it) pairs, in order: the lag of a follower behind them. */
  private readonly heard: Array<[number, number]> = [[0, Date.now()]];
  /** The last position each user (`user:`) and provider (`provider:`) wrote, until the standbys show it. */
  private readonly pendingWrites = new Map<string, number>();
  private chosen: Follower | undefined;
  private primaryAnswers = true;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> = Promise.resolve();
  /** The log the reads' caches follow: the chosen standby's, or the primary's when none is chosen. */
  readonly changes: ReadSignal;
  /**
   * The database the standby routes read from: queries and streams go to the chosen standby, else the primary;
   * transactions and scripts (every write) to the primary.
   */
  readonly reads: Database;
  /** The primary while it answers, else the reads' database: sign-in goes on through the primary's loss. */
  readonly primaryFirst: Database;

  /** `primary` as the writes reach it: its transactions are the ones the standby routes' writes take too. */
  constructor(
    private readonly primary: Database,
    private readonly primarySignal: ChangeSignal,
    standbys: readonly StandbyDatabase[],
    private readonly options: ReplicationOptions = {},
  ) {
    this.maxLagMs = options.maxLagMs ?? 5000;
    this.checkMs = options.checkMs ?? 1000;
    this.followers = standbys.map((standby) => new Follower(standby, options.onListenerError));
    this.changes = new ReadSignal(primarySignal, options.onListenerError);
    for (const follower of this.followers) this.changes.follow(follower.signal);
    this.reads = this.readingDatabase();
    this.primaryFirst = {
      ...primary,
      query: (sql, params) => this.readPrimaryFirst(sql, params),
      readOne: singleReads((sql, params) => this.readPrimaryFirst(sql, params)),
    };
    primarySignal.subscribe((notice) => this.heardOnPrimary(notice));
  }

  async start(): Promise<void> {
    this.running = true;
    await this.check();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.checking;
    await Promise.all(this.followers.map((follower) => follower.signal.stop()));
  }

  /**
   * Whether a standby route asked by `reader` (null: no one signed in) reads `reads`: unless the primary answers and
   * `reader` (or its provider) made a write `reads` does not show yet (read-your-writes); then it reads the primary.
   */
  readsFromStandby(reader: Reader | null): boolean {
    return !this.primaryAnswers || reader === null || this.showsWritesOf(reader);
  }

  /** Whether the reads of standby routes show every write `reader` (or its provider) made, as far as this instance heard. */
  private showsWritesOf(reader: Reader): boolean {
    const position = this.changes.position;
    const keys = [
      `user:${reader.userId}`,
      `provider:${reader.serviceProviderId}`,
      `provider:${reader.accessPointProviderId}`,
    ];
    return keys.every((key) => (this.pendingWrites.get(key) ?? 0) <= position);
  }

  status(): ReplicationStatus {
    return {
      primary: this.primaryAnswers,
      standbys: this.followers.map((follower) => this.statusOf(follower)),
    };
  }

  private async readPrimaryFirst<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    if (!this.primaryAnswers) return this.reads.query(sql, params);
    try {
      return await this.primary.query(sql, params);
    } catch (error) {
      if (!isDatabaseUnreachable(error)) throw error;
      this.unreachable(undefined);
      return this.reads.query(sql, params);
    }
  }

  private statusOf(follower: Follower): StandbyStatus {
    const lag = follower.reachable && follower.started ? this.lagMs(follower) / 1000 : null;
    return {
      name: follower.standby.name,
      state: follower.state,
      lagSeconds: lag,
      reading: this.chosen === follower,
      reads: follower.reads,
    };
  }

  private heardOnPrimary(notice: ChangeNotice): void {
    const now = Date.now();
    const last = this.heard.at(-1);
    if (!last || now - last[1] >= HEARD_RESOLUTION_MS) this.heard.push([notice.seq, now]);
    if (this.heard.length > MAX_HEARD) this.heard.shift();
    for (const writer of [
      notice.userId && `user:${notice.userId}`,
      notice.actingProviderId && `provider:${notice.actingProviderId}`,
    ]) {
      if (!writer) continue;
      this.pendingWrites.delete(writer);
      this.pendingWrites.set(writer, notice.seq);
      if (this.pendingWrites.size > MAX_PENDING_WRITERS)
        this.pendingWrites.delete(this.pendingWrites.keys().next().value as string);
    }
    for (const follower of this.followers) this.chase(follower);
  }

  /** Reads the follower's log until it shows what the primary's signal heard: at once, then after 5, 10, 20 ms ... */
  private chase(follower: Follower): void {
    if (follower.chasing || !follower.started || !this.running) return;
    follower.chasing = true;
    const step = (waitMs: number) => {
      void follower.signal.catchUp().then(
        () => {
          this.evaluate();
          if (follower.signal.position >= this.primarySignal.position || !this.running) {
            follower.chasing = false;
            return;
          }
          setTimeout(() => step(Math.min(waitMs * 2, this.checkMs)), waitMs).unref();
        },
        () => {
          // The periodic check finds out whether it answers.
          follower.chasing = false;
        },
      );
    };
    step(FIRST_CHASE_MS);
  }

  /** The age of the oldest change heard on the primary that the follower does not show yet; 0 when it shows them all. */
  private lagMs(follower: Follower): number {
    const position = follower.signal.position;
    if (position >= this.primarySignal.position) return 0;
    let since = this.heard[0]?.[1] ?? Date.now();
    for (const [seq, at] of this.heard) {
      if (seq > position + 1) break;
      since = at;
    }
    return Date.now() - since;
  }

  /** Asks the primary and every standby whether they answer, reads the standbys' logs, and chooses again; then waits. */
  private check(): Promise<void> {
    this.checking = Promise.all([
      this.checkPrimary(),
      ...this.followers.map((follower) => this.checkFollower(follower)),
    ]).then(() => {
      this.forgetShownWrites();
      this.evaluate();
      if (!this.running) return;
      this.timer = setTimeout(() => void this.check(), this.checkMs);
      this.timer.unref();
    });
    return this.checking;
  }

  private async checkPrimary(): Promise<void> {
    this.primaryAnswers = await within(this.primary.query('SELECT 1'), CHECK_TIMEOUT_MS).then(
      () => true,
      () => false,
    );
  }

  private async checkFollower(follower: Follower): Promise<void> {
    const { db } = follower.standby;
    try {
      const [row] = await within(
        db.query<{ recovering: boolean }>('SELECT pg_is_in_recovery() AS recovering'),
        CHECK_TIMEOUT_MS,
      );
      follower.recovering = row?.recovering ?? false;
      if (!follower.started) {
        await within(follower.signal.start(), CHECK_TIMEOUT_MS);
        follower.started = true;
      }
      await within(follower.signal.catchUp(), CHECK_TIMEOUT_MS);
      follower.reachable = true;
    } catch (error) {
      follower.reachable = false;
      if (!isDatabaseUnreachable(error)) this.options.onError?.(error);
    }
  }

  /** Forgets the writes and heard positions that every standby shows. */
  private forgetShownWrites(): void {
    const shown = Math.min(...this.followers.map((follower) => follower.signal.position));
    for (const [writer, seq] of this.pendingWrites) if (seq <= shown) this.pendingWrites.delete(writer);
    while (this.heard.length > 1 && (this.heard[1]?.[0] ?? Infinity) <= shown + 1) this.heard.shift();
  }

  private stateOf(follower: Follower): StandbyState {
    if (!follower.reachable || !follower.started) return 'unreachable';
    if (!follower.recovering) return 'promoted';
    return this.lagMs(follower) > this.maxLagMs ? 'lagging' : 'in rotation';
  }

  /** Chooses the standby the reads go to, moves the reads' caches to its log, and says which standbys changed state. */
  private evaluate(): void {
    const changed = this.followers.filter((follower) => {
      const state = this.stateOf(follower);
      if (state === follower.state) return false;
      follower.state = state;
      return true;
    });
    const inRotation = this.followers.find((follower) => follower.state === 'in rotation');
    const next = this.primaryAnswers ? inRotation : (inRotation ?? this.freshestAnswering());
    if (next !== this.chosen) {
      this.chosen = next;
      this.changes.switchTo(next?.signal ?? this.primarySignal);
    }
    for (const follower of changed) this.options.onStateChange?.(this.statusOf(follower));
  }

  /** Of the standbys that answer (promoted ones too), the one whose log shows the most. */
  private freshestAnswering(): Follower | undefined {
    const answering = this.followers.filter((follower) => follower.state !== 'unreachable');
    return answering.sort((a, b) => b.signal.position - a.signal.position)[0];
  }

  /** `target` failed as unreachable: out of the reads until its check finds it again. */
  private unreachable(target: Follower | undefined): void {
    if (target) target.reachable = false;
    else this.primaryAnswers = false;
    this.evaluate();
  }

  /** `work` on the chosen standby (else the primary); when that one cannot be reached, once more on the next choice. */
  private async read<T>(work: (db: Database) => Promise<T>): Promise<T> {
    const target = this.chosen;
    try {
      return await this.counted(target, work);
    } catch (error) {
      if (!isDatabaseUnreachable(error)) throw error;
      this.unreachable(target);
      if (this.chosen === target) throw error;
      return this.counted(this.chosen, work);
    }
  }

  private counted<T>(target: Follower | undefined, work: (db: Database) => T): T {
    if (target) target.reads += 1;
    return work(target?.standby.db ?? this.primary);
  }

  private readingDatabase(): Database {
    return {
      ...this.primary,
      query: (sql, params) => this.read((db) => db.query(sql, params)),
      readOne: (read, params) => this.read((db) => db.readOne(read, params)),
      stream: (sql, params, batchSize, maxBytes) => this.streamRead(sql, params, batchSize, maxBytes),
      // The primary and the standbys are closed by whoever opened them.
      close: async () => undefined,
    };
  }

  /** A stream from the chosen standby (else the primary); one that fails to begin there begins on the next choice. */
  private async *streamRead<T>(
    sql: string,
    params?: readonly unknown[],
    batchSize?: number,
    maxBytes?: number,
  ): AsyncGenerator<T[]> {
    const target = this.chosen;
    let started = false;
    try {
      for await (const rows of this.streamOn<T>(target, sql, params, batchSize, maxBytes)) {
        started = true;
        yield rows;
      }
    } catch (error) {
      // Rows already sent cannot be taken back: only a stream that has not begun goes elsewhere.
      if (started || !isDatabaseUnreachable(error)) throw error;
      this.unreachable(target);
      if (this.chosen === target) throw error;
      yield* this.streamOn<T>(this.chosen, sql, params, batchSize, maxBytes);
    }
  }

  private streamOn<T>(
    target: Follower | undefined,
    sql: string,
    params?: readonly unknown[],
    batchSize?: number,
    maxBytes?: number,
  ) {
    return this.counted(target, (db) => db.stream<T>(sql, params, batchSize, maxBytes));
  }
}

/**
 * The change signal of the reads: it tells what the log of the database they read from now tells, and tells a reset
 * when that database changes (the caches built from the other one are dropped).
 */
class ReadSignal implements ChangeSignal {
  private readonly listeners = new Set<(notice: ChangeNotice) => void>();
  private readonly resetListeners = new Set<() => void>();

  constructor(
    private source: ChangeSignal,
    private readonly onListenerError?: (error: unknown) => void,
  ) {
    this.follow(source);
  }

  /** Passes on what `signal` tells while it is the source. */
  follow(signal: ChangeSignal): void {
    signal.subscribe((notice) => {
      if (this.source === signal) tellEach(this.listeners, notice, this.onListenerError);
    });
    signal.onReset(() => {
      if (this.source === signal) this.reset();
    });
  }

  switchTo(signal: ChangeSignal): void {
    if (signal === this.source) return;
    this.source = signal;
    this.reset();
  }

  subscribe(listener: (notice: ChangeNotice) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onReset(listener: () => void): () => void {
    this.resetListeners.add(listener);
    return () => this.resetListeners.delete(listener);
  }

  catchUp(): Promise<void> {
    return this.source.catchUp();
  }

  get position(): number {
    return this.source.position;
  }

  // The signals it follows are started and stopped by their owners.
  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  private reset(): void {
    tellEach(this.resetListeners, undefined, this.onListenerError);
  }
}
