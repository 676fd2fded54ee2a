import type { Queryable } from '../db/database.js';

export interface DeliveryStatus {
  target: string;
  /** Participant changes not yet delivered. */
  pending: number;
  /** Seconds since the oldest of them was made; 0 with none. */
  oldestPendingSeconds: number;
  attempts: number;
  lastError: string | null;
  lastErrorAt: string | null;
}

export function deliveryStatus(db: Queryable): Promise<DeliveryStatus[]> {
  return db.query<DeliveryStatus>(
    `SELECT d.target, p.pending, coalesce(extract(epoch FROM now() - p.oldest), 0)::float8 AS "oldestPendingSeconds",
            d.attempts, d.last_error AS "lastError",
            to_char(d.last_error_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "lastErrorAt"
       FROM delivery_cursors d,
            LATERAL (SELECT count(*)::int AS pending, min(c.changed_at) AS oldest FROM change_log c
                      WHERE c.seq > d.seq AND c.resource = 'participant') p
      ORDER BY d.target`,
  );
}
