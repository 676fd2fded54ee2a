import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { participantIsLive } from '../participants/repository.js';
import { coalesced, type ChangeSignal } from './signal.js';
import type { DirectoryClient } from './directory-client.js';
import {
  forgetMigrationKey, forgetPushed, forgetSml, heldForThisSmp, recordPushed, recordSml, smlRecordOf, smlStateOf, wasPushed,
} from './network.js';
import { SmlError, type SmlClient } from './sml-client.js';

/**
 * Delivery of the registry's participants to the SML and the Peppol Directory (transactional outbox): the change log is the outbox, and
 * `delivery_cursors` says how far a target has delivered. One instance at a time holds a target's lease (a
 * compare-and-set update of its cursor row, renewed with every delivered entry), so two instances never send
 * the same change at once; entries are delivered in log order, so per participant too. Each entry is made
 * good against the current state (an organization with a live participant is registered, one without is not),
 * so a retry, a crash after a send or a repeated entry changes nothing twice (at least once, idempotent).
 */
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

const PARTICIPANT_SCHEME_SEPARATOR = '::';

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

async function organizationIsLive(db: Queryable, participant: string): Promise<boolean> {
  const value = participant.slice(participant.indexOf(PARTICIPANT_SCHEME_SEPARATOR) + 2);
  const at = value.indexOf(':');
  const [row] = await db.query(
    `SELECT 1 FROM participants pa WHERE pa.icd = $1 AND pa.organization_identifier = $2 AND ${participantIsLive('pa')} LIMIT 1`,
    [value.slice(0, at), value.slice(at + 1)],
  );
  return row !== undefined;
}

/** The SML: registered when the organization has its first live participant, deleted when the last one goes. */
export const smlTarget = (sml: SmlClient): DeliveryTarget => ({
  name: 'sml',
  deliver: (db, participant) => deliverToSml(db, sml, participant),
});

/**
 * The Peppol Directory: every change of a participant pushed (PUT), the organization deleted with its last one.
 * With `after: 'sml'` an entry is pushed only once the SML has it, since the Directory looks a pushed
 * participant up through the SML, and only while the SML holds it for this SMP (not one another SMP holds).
 * Only what was pushed is deleted.
 */
export const directoryTarget = (directory: DirectoryClient, after?: string): DeliveryTarget => ({
  name: 'directory',
  ...(after === undefined ? {} : { after }),
  async deliver(db, participant) {
    if (await organizationIsLive(db, participant)) {
      if (after !== undefined && !heldForThisSmp(await smlStateOf(db, participant))) return;
      await directory.put(participant);
      await recordPushed(db, participant);
    } else if (await wasPushed(db, participant)) {
      await directory.delete(participant);
      await forgetPushed(db, participant);
    }
  },
});

/** The SML's refusal that no retry can cure; anything else (a retry can cure it) is thrown again. */
function refusalOf(error: unknown): SmlError {
  if (error instanceof SmlError && error.final) return error;
  throw error;
}

async function deliverToSml(db: Queryable, sml: SmlClient, participant: string): Promise<void> {
  const { state, migrationKey } = await smlRecordOf(db, participant);
  const live = await organizationIsLive(db, participant);
  // One migrating out is served as usual, registered, until another SMP has migrated it (sml-reconcile ends it).
  const ours = heldForThisSmp(state);
  if (live && !ours) await registerInSml(db, sml, participant, migrationKey);
  else if (!live && ours) await deleteFromSml(db, sml, participant);
  else if (!live && state !== undefined) await forgetSml(db, participant);
}

/**
 * Registers the organization in the SML: Migrate with `key`, the one its provider gave (taking it over from
 * another SMP), else Create. A refusal of Create with BadRequestFault, or of Migrate, is of an answer that was lost when
 * the SML's List shows the organization under this SMP's ID; else a Create of one that "already exist[s]"
 * (ERR-106) is of one another SMP holds; any other refusal no retry can cure is recorded as refused (a wrong
 * migration key among them: it is not tried again). Each refusal is recorded, and the cursor goes on.
 */
export async function registerInSml(db: Queryable, sml: SmlClient, participant: string, key?: string): Promise<void> {
  const refusal = await (key === undefined ? sml.create(participant) : sml.migrate(participant, key)).then(() => undefined, refusalOf);
  if (key !== undefined) await forgetMigrationKey(db, participant);
  if (refusal === undefined) return recordSml(db, participant, 'registered');
  if (key !== undefined || refusal.fault === 'BadRequestFault') {
    const ours = (await sml.list()).some((held) => held.toLowerCase() === participant);
    if (ours) return recordSml(db, participant, 'registered');
    if (key === undefined && /already exist/i.test(refusal.message)) return recordSml(db, participant, 'held_elsewhere', refusal);
  }
  return recordSml(db, participant, 'refused', refusal);
}

/** Deletes the organization from the SML; a NotFoundFault (deleted by an earlier attempt whose answer was lost) is done. */
async function deleteFromSml(db: Queryable, sml: SmlClient, participant: string): Promise<void> {
  const refusal = await sml.delete(participant).then(() => undefined, refusalOf);
  if (refusal === undefined || refusal.fault === 'NotFoundFault') return forgetSml(db, participant);
  return recordSml(db, participant, 'refused', refusal);
}

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
