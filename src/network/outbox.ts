import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { coalesced, inTurns } from '../core/concurrency.js';
import type { ChangeSignal } from '../db/change-signal.js';

/** Lease, retry and polling of a delivery worker. */
export interface DeliveryOptions {
  /** The lease's length; an instance that stops delivering loses it after this. */
  leaseMs?: number;
  /** Back-off after a failure (of the peer, or of one organization set aside): doubled per attempt from the first, up to the last. */
  retryMs?: { first: number; max: number };
  /** How often a pass runs without a signal (retries, other instances' leases). */
  intervalMs?: number;
  batch?: number;
  /** Calls to the peer in flight at once (the window's organizations delivered C at a time, or in C lists). */
  concurrency?: number;
  /**
   * Organizations delivered together, each distinct (default: one round of `concurrency` lists of the target's
   * `listSize`; for a target of one organization a call, `ROUNDS_PER_WINDOW` rounds of `concurrency` calls; at least 100).
   */
  window?: number;
  /** The time a pass spends retrying organizations set aside before the log's new entries get their turn again. */
  retryBudgetMs?: number;
  onError?: (error: unknown) => void;
}

/** Where participant changes go: makes the target agree with the organization's current state. */
export interface DeliveryTarget {
  name: string;
  /** The target that must have delivered an entry before this one delivers it. */
  after?: string;
  /**
   * Returns once the target agrees with the organization: true when the peer was called and answered (accepted, or
   * refused for good and recorded), false when nothing had to be sent. Throws when the peer did not answer (a retry
   * may cure it). `operation` is the change log entry's; none on a retry of an organization set aside.
   */
  deliver(db: Queryable, participant: string, operation?: string): Promise<boolean>;
  /**
   * Delivers several distinct organizations at once, with at most `concurrency` calls to the peer in flight (the SML
   * groups them into lists); each one's outcome, in the order given. Without it they are delivered one by one
   * (`deliver`), `concurrency` at a time.
   */
  deliverMany?(db: Queryable, entries: readonly Delivery[], concurrency: number): Promise<Outcome[]>;
  /** The organizations one call of the peer carries at most (the SML's CreateList); the window is sized by it. */
  listSize?: number;
}

/** An organization to deliver, with the change log entry's operation (none on a retry of one set aside). */
export interface Delivery {
  participant: string;
  operation?: string;
}

/** Whether the peer answered (`called`: it had to be asked), or what failed (a retry may cure it). */
export interface Outcome {
  failure?: unknown;
  called: boolean;
}

/** The polite default of calls to a peer in flight at once. */
export const DEFAULT_DELIVERY_CONCURRENCY = 4;

/** Each delivery's outcome, `concurrency` at a time, through `deliver`. */
export function deliveredInTurns(
  entries: readonly Delivery[],
  concurrency: number,
  deliver: (entry: Delivery) => Promise<boolean>,
): Promise<Outcome[]> {
  const turn = inTurns(concurrency);
  return Promise.all(
    entries.map((entry) =>
      turn(() => deliver(entry)).then(
        (called): Outcome => ({ called }),
        (error: unknown): Outcome => ({ failure: error ?? new Error('delivery failed'), called: true }),
      ),
    ),
  );
}

export interface DeliveryWorker {
  /** One delivery pass now (resolves when done); passes run one at a time. */
  kick(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface Entry {
  seq: number;
  identifier: string;
  operation: string;
  /** Set aside by this target, or by the one it waits for. */
  asideHere: boolean;
  asideBefore: boolean;
}

/** A probe of the peer is an organization among the next this many of the log (a different one at each attempt). */
const PROBE_WINDOW = 8;
const DEFAULT_RETRY_BUDGET_MS = 1000;

/**
 * A window ends when its slowest call has answered: a target that takes one organization a call (the Directory) gets
 * a few rounds of calls a window, so that the wait for the slowest and the window's read are shared by more of them.
 */
const ROUNDS_PER_WINDOW = 4;

/**
 * Delivery of the registry's participants to the SML and the Peppol Directory (transactional outbox): the change log is
 * the outbox, `delivery_cursors` says how far a target has delivered, `delivery_set_aside` which organizations it left
 * behind. One instance at a time holds a target's lease (a compare-and-set update of its cursor row, renewed while a
 * pass runs), so two instances never send the same change at once.
 *
 * The log is delivered a window at a time: distinct organizations (a window ends before an organization it holds),
 * delivered together with at most `concurrency` calls to the peer in flight (`deliverMany`: the SML in lists).
 *
 * Order is kept per organization, not for the whole log. An entry whose delivery fails is retried at once with
 * another organization (a probe: one of the next few in the log, a different one at each attempt): if the peer
 * answers that one, the failure is this organization's own, and it is set aside with its later changes (retried with
 * back-off, each retry making the target agree with its state of the moment) while the cursor goes on. If the probe
 * fails too, the peer fails for everyone: the cursor holds, with back-off, and nothing is set aside. Each entry is
 * made good against the current state, so a retry, a crash after a send or a repeated entry changes nothing twice
 * (at least once, idempotent).
 */
export function outboxDelivery(
  db: Database,
  signal: ChangeSignal,
  target: DeliveryTarget,
  options: DeliveryOptions = {},
): DeliveryWorker {
  const TARGET = target.name;
  const me = randomUUID();
  const leaseMs = options.leaseMs ?? 30_000;
  const retry = options.retryMs ?? { first: 1000, max: 60_000 };
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY);
  const windowSize = Math.max(1, options.window ?? Math.max(100, concurrency * (target.listSize ?? ROUNDS_PER_WINDOW)));
  const batch = Math.max(options.batch ?? 100, windowSize);
  const retryBudgetMs = options.retryBudgetMs ?? DEFAULT_RETRY_BUDGET_MS;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let running = false;
  const BACK_OFF = (attempts: string) =>
    `least($1::float8, $2::float8 * power(2, ${attempts})) * interval '1 millisecond'`;

  /** The cursor, when this instance may deliver now: its back-off is over, or a new change can probe a failing peer. */
  const lease = async (): Promise<{ seq: number; attempts: number } | undefined> => {
    const [row] = await db.query<{ seq: number; attempts: number }>(
      `UPDATE delivery_cursors SET leased_by = $2, leased_until = now() + $3 * interval '1 millisecond'
        WHERE target = $1 AND (leased_until IS NULL OR leased_until < now() OR leased_by = $2)
          AND (next_attempt_at <= now() OR (probe_horizon IS NOT NULL
               AND EXISTS (SELECT 1 FROM change_log WHERE seq > probe_horizon AND resource = 'participant')))
        RETURNING seq, attempts`,
      [TARGET, me, leaseMs],
    );
    return row;
  };

  /** Moves the cursor while still holding the lease (renewing it); false when another instance took it. */
  const advance = async (seq: number): Promise<boolean> => {
    const rows = await db.query(
      `UPDATE delivery_cursors SET seq = $3, attempts = 0, last_error = NULL, probe_horizon = NULL,
              leased_until = now() + $4 * interval '1 millisecond'
        WHERE target = $1 AND leased_by = $2 RETURNING 1`,
      [TARGET, me, seq, leaseMs],
    );
    return rows.length > 0;
  };

  /** The peer failed for everyone (or could not be told apart): the cursor waits, and gives up the lease. */
  const hold = (error: unknown, probeHorizon: number | null) =>
    db.query(
      `UPDATE delivery_cursors SET attempts = attempts + 1, last_error = $5, last_error_at = now(), leased_by = NULL,
            leased_until = NULL, probe_horizon = $6, next_attempt_at = now() + ${BACK_OFF('attempts')}
      WHERE target = $3 AND leased_by = $4`,
      [retry.max, retry.first, TARGET, me, messageOf(error), probeHorizon],
    );

  const release = () =>
    db.query('UPDATE delivery_cursors SET leased_by = NULL, leased_until = NULL WHERE target = $1 AND leased_by = $2', [
      TARGET,
      me,
    ]);

  /** Whether the peer answered (`called`: it had to be asked), or what failed. */
  const attempt = async (participant: string, operation?: string): Promise<{ failure?: unknown; called: boolean }> => {
    try {
      return { called: await target.deliver(db, participant, operation) };
    } catch (error) {
      options.onError?.(error);
      return { failure: error ?? new Error('delivery failed'), called: true };
    }
  };

  /** The window's organizations delivered at once, each one's outcome (every failure told to `onError`). */
  const deliverWindow = async (entries: Entry[]): Promise<Outcome[]> => {
    const deliveries = entries.map((entry) => ({ participant: entry.identifier, operation: entry.operation }));
    let outcomes: Outcome[];
    try {
      outcomes = target.deliverMany
        ? await target.deliverMany(db, deliveries, concurrency)
        : await deliveredInTurns(deliveries, concurrency, (entry) =>
            target.deliver(db, entry.participant, entry.operation),
          );
    } catch (error) {
      // Nothing of the window could be told apart (its reads failed): every one of it failed.
      outcomes = entries.map(() => ({ failure: error ?? new Error('delivery failed'), called: true }));
    }
    for (const outcome of outcomes) if (outcome.failure !== undefined) options.onError?.(outcome.failure);
    return outcomes;
  };

  const setAside = (participant: string, error: unknown) =>
    db.query(
      `INSERT INTO delivery_set_aside (target, participant, attempts, next_attempt_at, last_error, last_error_at)
     VALUES ($3, $4, 1, now() + ${BACK_OFF('0')}, $5, now())
     ON CONFLICT (target, participant) DO UPDATE SET attempts = delivery_set_aside.attempts + 1, waiting_for = NULL,
            next_attempt_at = now() + ${BACK_OFF('delivery_set_aside.attempts')}, last_error = excluded.last_error, last_error_at = now()`,
      [retry.max, retry.first, TARGET, participant, messageOf(error)],
    );

  /** Waits, with no failure of its own, for the target before this one to deliver the organization it set aside. */
  const waitFor = (participant: string, before: string) =>
    db.query(
      `INSERT INTO delivery_set_aside (target, participant, waiting_for) VALUES ($1, $2, $3) ON CONFLICT (target, participant) DO NOTHING`,
      [TARGET, participant, before],
    );

  /**
   * The entries after the cursor, up to the log's position (or the position the target before this one reached),
   * each with whether its organization is set aside here or there.
   */
  const pageAfter = async (cursor: number) => {
    const [page] = await db.query<{ position: number; logPosition: number; entries: Entry[] }>(
      `WITH bound AS (
         SELECT CASE WHEN $3::text IS NULL THEN p.seq
                     ELSE least(p.seq, coalesce((SELECT d.seq FROM delivery_cursors d WHERE d.target = $3), 0)) END AS seq
           FROM change_log_position p)
       SELECT (SELECT seq FROM bound) AS position, (SELECT seq FROM change_log_position) AS "logPosition",
              (SELECT coalesce(json_agg(e ORDER BY e.seq), '[]'::json) FROM (
                 SELECT c.seq, c.identifier, c.operation,
                        EXISTS (SELECT 1 FROM delivery_set_aside a WHERE a.target = $4 AND a.participant = c.identifier) AS "asideHere",
                        EXISTS (SELECT 1 FROM delivery_set_aside a WHERE a.target = $3 AND a.participant = c.identifier) AS "asideBefore"
                   FROM change_log c
                  WHERE c.seq > $1 AND c.seq <= (SELECT seq FROM bound) AND c.resource = 'participant'
                  ORDER BY c.seq LIMIT $2) e) AS entries`,
      [cursor, batch, target.after ?? null, TARGET],
    );
    return {
      position: page?.position ?? cursor,
      logPosition: page?.logPosition ?? cursor,
      entries: page?.entries ?? [],
    };
  };

  /**
   * Other organizations than `failing` among the next entries, to try the peer with, the first a different one per
   * `attempts` (a held cursor tries another each time).
   */
  const probesFor = (
    entries: Entry[],
    from: number,
    failing: ReadonlySet<string>,
    attempts: number,
    skip: (entry: Entry) => boolean,
  ): Entry[] => {
    const candidates = new Map<string, Entry>();
    for (const entry of entries.slice(from + 1)) {
      if (candidates.size >= PROBE_WINDOW) break;
      if (!failing.has(entry.identifier) && !skip(entry) && !candidates.has(entry.identifier))
        candidates.set(entry.identifier, entry);
    }
    const choices = [...candidates.values()];
    const first = attempts % Math.max(choices.length, 1);
    return [...choices.slice(first), ...choices.slice(0, first)];
  };

  /**
   * Whether the peer answers another organization than the one that failed: the first probe that has to call it
   * decides (one that needs no call is delivered, and the next is tried). undefined: none had to call it.
   */
  const peerAnswersOthers = async (
    probes: Entry[],
    delivered: (entry: Entry) => void,
  ): Promise<boolean | undefined> => {
    for (const probe of probes) {
      const { failure, called } = await attempt(probe.identifier, probe.operation);
      if (failure !== undefined) return false;
      delivered(probe);
      if (called) return true;
    }
    return undefined;
  };

  /**
   * Delivers the log after the cursor, a window at a time: the next entries up to the window's size or the first
   * that names an organization already in it (one call per organization in flight, and its changes in order),
   * delivered at once. 'held' when the peer failed for everyone, 'lost' when the lease went.
   */
  async function deliverLog(
    start: { seq: number; attempts: number },
    held: { lost: boolean },
  ): Promise<'done' | 'held' | 'lost'> {
    let cursor = start.seq;
    // Organizations set aside in this pass, and those a probe delivered (up to the log position it read).
    const asideNow = new Set<string>();
    const probed = new Map<string, number>();
    for (;;) {
      const { position, logPosition, entries } = await pageAfter(cursor);
      const settled = (entry: Entry) =>
        entry.asideHere ||
        entry.asideBefore ||
        asideNow.has(entry.identifier) ||
        (probed.get(entry.identifier) ?? -1) >= entry.seq;
      let next = 0;
      while (next < entries.length) {
        if (held.lost) return 'lost';
        const window: Entry[] = [];
        const inWindow = new Set<string>();
        let end = next;
        for (; end < entries.length && window.length < windowSize; end += 1) {
          const entry = entries[end] as Entry;
          if (inWindow.has(entry.identifier)) break;
          if (entry.asideBefore && target.after !== undefined) await waitFor(entry.identifier, target.after);
          if (!settled(entry)) {
            window.push(entry);
            inWindow.add(entry.identifier);
          }
        }
        const outcomes = window.length > 0 ? await deliverWindow(window) : [];
        const failed = window.flatMap((entry, at) => {
          const failure = outcomes[at]?.failure;
          return failure === undefined ? [] : [{ entry, failure }];
        });
        if (failed.length > 0) {
          // Another organization of the window answered: the failures are their own. Else a probe decides.
          let answers: boolean | undefined = outcomes.some((outcome) => outcome.failure === undefined && outcome.called)
            ? true
            : undefined;
          let latestLogPosition = logPosition;
          if (!answers) {
            // Changes made while the calls failed (they can take the whole call bound) are candidates too.
            const latest =
              end < entries.length
                ? { position, logPosition, entries, from: end - 1 }
                : { ...(await pageAfter(cursor)), from: -1 };
            latestLogPosition = latest.logPosition;
            const probes = probesFor(latest.entries, latest.from, inWindow, start.attempts, settled);
            answers = await peerAnswersOthers(probes, (probe) => probed.set(probe.identifier, latest.position));
          }
          if (answers !== true) {
            // The peer fails for everyone; or nothing else could try it: the next change in the log lets it try again.
            await hold(failed[0]?.failure, answers === undefined ? latestLogPosition : null);
            return 'held';
          }
          for (const { entry, failure } of failed) {
            asideNow.add(entry.identifier);
            await setAside(entry.identifier, failure);
          }
        }
        const last = entries[end - 1] as Entry;
        if (!(await advance(last.seq))) return 'lost';
        cursor = last.seq;
        next = end;
      }
      if (entries.length < batch) {
        if (position > cursor && !(await advance(position))) return 'lost';
        return 'done';
      }
    }
  }

  /** Retries the organizations set aside whose time has come, for at most the retry budget (then the log's turn). */
  async function retrySetAside(held: { lost: boolean }): Promise<void> {
    const started = Date.now();
    while (!held.lost && Date.now() - started < retryBudgetMs) {
      const [due] = await db.query<{ participant: string }>(
        `SELECT a.participant FROM delivery_set_aside a
          WHERE a.target = $1 AND a.next_attempt_at <= now()
            AND NOT EXISTS (SELECT 1 FROM delivery_set_aside b WHERE b.target = $2 AND b.participant = a.participant)
          ORDER BY a.next_attempt_at LIMIT 1`,
        [TARGET, target.after ?? null],
      );
      if (!due) return;
      const { failure } = await attempt(due.participant);
      if (failure === undefined) {
        await db.query('DELETE FROM delivery_set_aside WHERE target = $1 AND participant = $2', [
          TARGET,
          due.participant,
        ]);
      } else {
        await setAside(due.participant, failure);
      }
    }
  }

  /**
   * Renews the lease while a pass runs, so it cannot expire under a delivery slower than the lease (a slow SML,
   * a long List) and let another instance deliver the same entry at the same time; `lost` once another took it.
   */
  const holdLease = () => {
    const held = { lost: false, stop: () => clearInterval(timer) };
    const renew = () =>
      void db
        .query(
          `UPDATE delivery_cursors SET leased_until = now() + $3 * interval '1 millisecond' WHERE target = $1 AND leased_by = $2 RETURNING 1`,
          [TARGET, me, leaseMs],
        )
        .then(
          (rows) => {
            if (rows.length === 0) held.lost = true;
          },
          () => undefined,
        );
    const timer = setInterval(renew, leaseMs / 3);
    return held;
  };

  async function pass(): Promise<void> {
    const leased = await lease();
    if (leased === undefined) return;
    const held = holdLease();
    try {
      if ((await deliverLog(leased, held)) === 'done') {
        await retrySetAside(held);
        await release();
      }
    } catch (error) {
      options.onError?.(error);
      await hold(error, null);
    } finally {
      held.stop();
    }
  }

  const passes = coalesced(pass, (error) => options.onError?.(error));
  const kick = () => (running ? passes.run() : Promise.resolve());
  const kicked = () => void kick().catch(() => undefined);

  return {
    kick,
    async start() {
      await db.query(`INSERT INTO delivery_cursors (target, seq) VALUES ($1, 0) ON CONFLICT DO NOTHING`, [TARGET]);
      running = true;
      unsubscribe = signal.subscribe((notice) => {
        if (notice.resource === 'participant') kicked();
      });
      timer = setInterval(kicked, options.intervalMs ?? 1000);
      timer.unref();
      kicked();
    },
    async stop() {
      running = false;
      clearInterval(timer);
      unsubscribe?.();
      await passes.settled();
      await release().catch(() => undefined);
    },
  };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
