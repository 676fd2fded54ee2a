import type { Queryable } from '../db/database.js';
import type { SmlError } from './sml-client.js';

/**
 * Each participant's place in the network: what the SML said to it (`sml_participants`) and what the Directory
 * was pushed (`directory_participants`), written by the deliveries and read by the API (migration 017).
 */
export const SML_STATES = ['registered', 'held_elsewhere', 'refused', 'migrating_out'] as const;
export type SmlState = (typeof SML_STATES)[number];

const TIMESTAMP = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

/** Whether the SML holds the organization for this SMP: registered, or migrating out (served until migrated). */
export const heldForThisSmp = (state: SmlState | undefined) => state === 'registered' || state === 'migrating_out';

/** What the delivery needs of an organization in one read: its SML state and the migration key its provider gave. */
export async function smlRecordOf(db: Queryable, participant: string): Promise<{ state?: SmlState; migrationKey?: string }> {
  const [row] = await db.query<{ state: SmlState | null; migrationKey: string | null }>(
    `SELECT s.state, k.migration_key AS "migrationKey"
       FROM (SELECT $1::text AS participant) p
       LEFT JOIN sml_participants s ON s.participant = p.participant
       LEFT JOIN sml_migration_keys k ON k.participant = p.participant`,
    [participant],
  );
  return { ...(row?.state ? { state: row.state } : {}), ...(row?.migrationKey ? { migrationKey: row.migrationKey } : {}) };
}

export async function smlStateOf(db: Queryable, participant: string): Promise<SmlState | undefined> {
  const [row] = await db.query<{ state: SmlState }>('SELECT state FROM sml_participants WHERE participant = $1', [participant]);
  return row?.state;
}

/** Records what the SML said; `since` moves only when the state changes. */
export async function recordSml(db: Queryable, participant: string, state: SmlState, refusal?: SmlError): Promise<void> {
  await db.query(
    `INSERT INTO sml_participants (participant, state, error_fault, error_code, error_message) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (participant) DO UPDATE SET state = excluded.state, error_fault = excluded.error_fault,
            error_code = excluded.error_code, error_message = excluded.error_message, checked_at = now(),
            since = CASE WHEN sml_participants.state = excluded.state THEN sml_participants.since ELSE now() END`,
    [participant, state, refusal?.fault ?? null, refusal?.code ?? null, refusal?.message ?? null],
  );
}

export async function participantsMigratingOut(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ participant: string }>(`SELECT participant FROM sml_participants WHERE state = 'migrating_out'`);
  return rows.map((row) => row.participant);
}

export async function forgetSml(db: Queryable, participant: string): Promise<void> {
  await db.query('DELETE FROM sml_participants WHERE participant = $1', [participant]);
}

/** Replaces what the registry believes the SML holds for this SMP as registered (sml-reconcile); one migrating out stays so. */
export async function recordRegistered(db: Queryable, participants: readonly string[]): Promise<void> {
  await db.query(`DELETE FROM sml_participants WHERE state = 'registered' AND NOT (participant = ANY($1::text[]))`, [participants]);
  await db.query(
    `INSERT INTO sml_participants (participant, state) SELECT unnest($1::text[]), 'registered'
     ON CONFLICT (participant) DO UPDATE SET state = 'registered', error_fault = NULL, error_code = NULL, error_message = NULL,
            checked_at = now(), since = CASE WHEN sml_participants.state = 'registered' THEN sml_participants.since ELSE now() END
      WHERE sml_participants.state <> 'migrating_out'`,
    [participants],
  );
}

/** Keeps the key a provider gave to take the organization over from another SMP, for the delivery's Migrate. */
export async function keepMigrationKey(db: Queryable, participant: string, key: string): Promise<void> {
  await db.query(
    `INSERT INTO sml_migration_keys (participant, migration_key) VALUES ($1, $2)
     ON CONFLICT (participant) DO UPDATE SET migration_key = excluded.migration_key, given_at = now()`,
    [participant, key],
  );
}

export async function forgetMigrationKey(db: Queryable, participant: string): Promise<void> {
  await db.query('DELETE FROM sml_migration_keys WHERE participant = $1', [participant]);
}

export async function wasPushed(db: Queryable, participant: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM directory_participants WHERE participant = $1', [participant])).length > 0;
}

export async function recordPushed(db: Queryable, participant: string): Promise<void> {
  await db.query(
    'INSERT INTO directory_participants (participant) VALUES ($1) ON CONFLICT (participant) DO UPDATE SET pushed_at = now()',
    [participant],
  );
}

export async function forgetPushed(db: Queryable, participant: string): Promise<void> {
  await db.query('DELETE FROM directory_participants WHERE participant = $1', [participant]);
}

interface SmlRefusal {
  fault: string | null;
  code: string | null;
  message: string;
}

/** A target's view of one participant; `state` null where the target is not configured. */
interface TargetState<State extends string> {
  state: State | null;
  since: string | null;
  lastError: SmlRefusal | null;
}

export interface NetworkState {
  participant: string;
  sml: TargetState<SmlState | 'pending'>;
  directory: TargetState<'pushed' | 'pending' | 'waiting_for_sml'>;
}

interface NetworkRow {
  smlConfigured: boolean;
  smlPendingSince: string | null;
  smlState: SmlState | null;
  smlSince: string | null;
  fault: string | null;
  code: string | null;
  message: string | null;
  cursorError: string | null;
  directoryConfigured: boolean;
  directoryPendingSince: string | null;
  pushedAt: string | null;
}

/**
 * Where one (live) participant stands: pending while a change of it waits behind a target's cursor (since the
 * oldest such change; the cursor's last error, a failure a retry can cure, is its error), else what the target
 * recorded. The Directory waits for the SML: an organization the SML does not hold for this SMP is not pushed.
 */
export async function networkStateOf(db: Queryable, participant: string): Promise<NetworkState> {
  const pendingSince = (target: string) => `(SELECT ${TIMESTAMP('min(c.changed_at)')} FROM change_log c, delivery_cursors d
      WHERE d.target = '${target}' AND c.resource = 'participant' AND c.identifier = $1 AND c.seq > d.seq)`;
  const [row] = await db.query<NetworkRow>(
    `SELECT EXISTS (SELECT 1 FROM delivery_cursors WHERE target = 'sml') AS "smlConfigured",
            ${pendingSince('sml')} AS "smlPendingSince",
            s.state AS "smlState", ${TIMESTAMP('s.since')} AS "smlSince",
            s.error_fault AS fault, s.error_code AS code, s.error_message AS message,
            (SELECT last_error FROM delivery_cursors WHERE target = 'sml') AS "cursorError",
            EXISTS (SELECT 1 FROM delivery_cursors WHERE target = 'directory') AS "directoryConfigured",
            ${pendingSince('directory')} AS "directoryPendingSince",
            (SELECT ${TIMESTAMP('pushed_at')} FROM directory_participants WHERE participant = $1) AS "pushedAt"
       FROM (SELECT 1) one LEFT JOIN sml_participants s ON s.participant = $1`,
    [participant],
  );
  return { participant, sml: smlView(row as NetworkRow), directory: directoryView(row as NetworkRow) };
}

function smlView(row: NetworkRow): NetworkState['sml'] {
  if (!row.smlConfigured) return { state: null, since: null, lastError: null };
  if (row.smlPendingSince !== null || row.smlState === null) {
    const lastError = row.smlPendingSince !== null && row.cursorError !== null ? { fault: null, code: null, message: row.cursorError } : null;
    return { state: 'pending', since: row.smlPendingSince, lastError };
  }
  const lastError = row.message === null ? null : { fault: row.fault, code: row.code, message: row.message };
  return { state: row.smlState, since: row.smlSince, lastError };
}

function directoryView(row: NetworkRow): NetworkState['directory'] {
  if (!row.directoryConfigured) return { state: null, since: null, lastError: null };
  if (row.directoryPendingSince !== null) return { state: 'pending', since: row.directoryPendingSince, lastError: null };
  if (row.pushedAt !== null) return { state: 'pushed', since: row.pushedAt, lastError: null };
  return { state: 'waiting_for_sml', since: null, lastError: null };
}

export interface StuckParticipant {
  participant: string;
  state: Exclude<SmlState, 'registered' | 'migrating_out'> | 'pending';
  since: string;
  lastError: SmlRefusal | null;
}

/**
 * The participants whose registration in the SML is stuck, oldest first, at most `limit` per state: held by
 * another SMP, refused, and pending behind the SML cursor.
 */
export async function stuckParticipants(db: Queryable, limit: number): Promise<StuckParticipant[]> {
  const recorded = (state: StuckParticipant['state']) => db.query<StuckParticipant>(
    `SELECT participant, state, ${TIMESTAMP('since')} AS since,
            json_build_object('fault', error_fault, 'code', error_code, 'message', error_message) AS "lastError"
       FROM sml_participants WHERE state = $1 ORDER BY since, participant LIMIT $2`,
    [state, limit],
  );
  // The next entries behind the cursor only, however far behind it is.
  const pending = db.query<StuckParticipant>(
    `SELECT e.identifier AS participant, 'pending' AS state, ${TIMESTAMP('min(e.changed_at)')} AS since, NULL AS "lastError"
       FROM (SELECT c.identifier, c.changed_at, c.seq FROM change_log c, delivery_cursors d
              WHERE d.target = 'sml' AND c.resource = 'participant' AND c.seq > d.seq ORDER BY c.seq LIMIT $1 * 10) e
      GROUP BY e.identifier ORDER BY min(e.seq) LIMIT $1`,
    [limit],
  );
  return (await Promise.all([recorded('held_elsewhere'), recorded('refused'), pending])).flat();
}
