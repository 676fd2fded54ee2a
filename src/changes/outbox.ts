import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { coalesced, type ChangeSignal } from './signal.js';

/** Lease, retry and polling of a delivery worker. */
export interface DeliveryOptions {
  /** The lease's length; an instance that stops delivering loses it after this. */
  leaseMs?: number;
  /** Back-off after a failure: doubled per attempt from the first, up to the last. */
  retryMs?: { first: number; max: number };
  /** How often a pass runs without a signal (retries, other instances' leases). */
  intervalMs?: number;
  batch?: number;
  onError?: (error: unknown) => void;
}

/** Where participant changes go: makes the target agree with the participant's current state. */
export interface DeliveryTarget {
  name: string;
  /** The target that must have delivered an entry before this one delivers it. */
  after?: string;
  deliver(db: Queryable, participant: string): Promise<void>;
}

export interface DeliveryWorker {
  /** One delivery pass now (resolves when done); passes run one at a time. */
  kick(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Delivery of the registry's participants to the SML and the Peppol Directory (transactional outbox): the change log is the outbox, and
 * `delivery_cursors` says how far a target has delivered. One instance at a time holds a target's lease (a
 * compare-and-set update of its cursor row, renewed with every delivered entry), so two instances never send
 * the same change at once; entries are delivered in log order, so per participant too. Each entry is made
 * good against the current state (an organization with a live participant is registered, one without is not),
 * so a retry, a crash after a send or a repeated entry changes nothing twice (at least once, idempotent).
 */
export function outboxDelivery(db: Database, signal: ChangeSignal, target: DeliveryTarget, options: DeliveryOptions = {}): DeliveryWorker {
  const TARGET = target.name;
  const me = randomUUID();
  const leaseMs = options.leaseMs ?? 30_000;
  const retry = options.retryMs ?? { first: 1000, max: 60_000 };
  const batch = options.batch ?? 100;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let running = false;

  const lease = async (): Promise<number | undefined> => {
    const [row] = await db.query<{ seq: number }>(
      `UPDATE delivery_cursors SET leased_by = $2, leased_until = now() + $3 * interval '1 millisecond'
        WHERE target = $1 AND next_attempt_at <= now() AND (leased_until IS NULL OR leased_until < now() OR leased_by = $2)
        RETURNING seq`,
      [TARGET, me, leaseMs],
    );
    return row?.seq;
  };

  /** Moves the cursor while still holding the lease (renewing it); false when another instance took it. */
  const advance = async (seq: number): Promise<boolean> => {
    const rows = await db.query(
      `UPDATE delivery_cursors SET seq = $3, attempts = 0, last_error = NULL, leased_until = now() + $4 * interval '1 millisecond'
        WHERE target = $1 AND leased_by = $2 RETURNING 1`,
      [TARGET, me, seq, leaseMs],
    );
    return rows.length > 0;
  };

  const failed = (error: unknown) => db.query(
    `UPDATE delivery_cursors SET attempts = attempts + 1, last_error = $3, last_error_at = now(), leased_by = NULL,
            leased_until = NULL,
            next_attempt_at = now() + least($5::float8, $4::float8 * power(2, attempts)) * interval '1 millisecond'
      WHERE target = $1 AND leased_by = $2`,
    [TARGET, me, error instanceof Error ? error.message : String(error), retry.first, retry.max],
  );

  /**
   * Renews the lease while a pass runs, so it cannot expire under a delivery slower than the lease (a slow SML,
   * a long List) and let another instance deliver the same entry at the same time; `lost` once another took it.
   */
  const holdLease = () => {
    const held = { lost: false, stop: () => clearInterval(timer) };
    const renew = () => void db.query(
      `UPDATE delivery_cursors SET leased_until = now() + $3 * interval '1 millisecond' WHERE target = $1 AND leased_by = $2 RETURNING 1`,
      [TARGET, me, leaseMs],
    ).then((rows) => {
      if (rows.length === 0) held.lost = true;
    }, () => undefined);
    const timer = setInterval(renew, leaseMs / 3);
    return held;
  };

  async function pass(): Promise<void> {
    const leased = await lease();
    if (leased === undefined) return;
    let cursor: number = leased;
    const held = holdLease();
    try {
      for (;;) {
        const [page] = await db.query<{ position: number; entries: Array<{ seq: number; identifier: string }> }>(
          `WITH bound AS (
             SELECT CASE WHEN $3::text IS NULL THEN p.seq
                         ELSE least(p.seq, coalesce((SELECT d.seq FROM delivery_cursors d WHERE d.target = $3), 0)) END AS seq
               FROM change_log_position p)
           SELECT (SELECT seq FROM bound) AS position,
                  (SELECT coalesce(json_agg(e ORDER BY e.seq), '[]'::json) FROM (
                     SELECT seq, identifier FROM change_log
                      WHERE seq > $1 AND seq <= (SELECT seq FROM bound) AND resource = 'participant'
                      ORDER BY seq LIMIT $2) e) AS entries`,
          [cursor, batch, target.after ?? null],
        );
        const entries: Array<{ seq: number; identifier: string }> = page?.entries ?? [];
        for (const entry of entries) {
          if (held.lost) return;
          await target.deliver(db, entry.identifier);
          if (!(await advance(entry.seq))) return;
          cursor = entry.seq;
        }
        if (entries.length < batch) {
          if ((page?.position ?? cursor) > cursor) await advance(page?.position ?? cursor);
          break;
        }
      }
      await db.query('UPDATE delivery_cursors SET leased_by = NULL, leased_until = NULL WHERE target = $1 AND leased_by = $2', [TARGET, me]);
    } catch (error) {
      options.onError?.(error);
      await failed(error);
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
      await db.query('UPDATE delivery_cursors SET leased_by = NULL, leased_until = NULL WHERE target = $1 AND leased_by = $2', [TARGET, me])
        .catch(() => undefined);
    },
  };
}
