import { utcInstant } from '../db/sql.js';
import type { Queryable } from '../db/database.js';

export interface DeliveryStatus {
  target: string;
  /** Participant changes behind the cursor, not yet delivered. */
  pending: number;
  /** Organizations set aside (failing while the target answers the others), retried with back-off. */
  setAside: number;
  /** Seconds since the oldest change not delivered was made (behind the cursor, or of one set aside); 0 with none. */
  oldestPendingSeconds: number;
  /** Failed attempts of the cursor since its last success: the target failing for everyone. */
  attempts: number;
  lastError: string | null;
  lastErrorAt: string | null;
}

export function deliveryStatus(db: Queryable): Promise<DeliveryStatus[]> {
  return db.query<DeliveryStatus>(
    `SELECT d.target, p.pending, a.count AS "setAside",
            coalesce(extract(epoch FROM now() - least(p.oldest, a.oldest)), 0)::float8 AS "oldestPendingSeconds",
            d.attempts, d.last_error AS "lastError",
            ${utcInstant('d.last_error_at')} AS "lastErrorAt"
       FROM delivery_cursors d,
            LATERAL (SELECT count(*)::int AS pending, min(c.changed_at) AS oldest FROM change_log c
                      WHERE c.seq > d.seq AND c.resource = 'participant') p,
            LATERAL (SELECT count(*)::int AS count, min(s.since) AS oldest FROM delivery_set_aside s
                      WHERE s.target = d.target AND s.waiting_for IS NULL) a
      ORDER BY d.target`,
  );
}
