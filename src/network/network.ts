import { utcInstant } from '../db/sql.js';
import type { Queryable } from '../db/database.js';
import { parseOrganization } from '../participants/identifiers.js';
import { participantIsLive } from '../participants/repository.js';
import type { DirectoryError } from './directory-client.js';
import type { SmlError } from './sml-client.js';

/**
 * Each participant's place in the network: what the SML said to it (`sml_participants`) and what the Directory
 * was pushed (`directory_participants`), written by the deliveries and read by the API (migration 017).
 */
export const SML_STATES = ['registered', 'held_elsewhere', 'refused', 'migrating_out'] as const;
export type SmlState = (typeof SML_STATES)[number];

/** Whether the SML holds the organization for this SMP: registered, or migrating out (served until migrated). */
export const heldForThisSmp = (state: SmlState | undefined) => state === 'registered' || state === 'migrating_out';

/** What the delivery needs of an organization in one read: its SML state and the migration key its provider gave. */
export async function smlRecordOf(
  db: Queryable,
  participant: string,
): Promise<{ state?: SmlState; migrationKey?: string }> {
  const [row] = await db.query<{ state: SmlState | null; migrationKey: string | null }>(
    `SELECT s.state, k.migration_key AS "migrationKey"
       FROM (SELECT $1::text AS participant) p
       LEFT JOIN sml_participants s ON s.participant = p.participant
       LEFT JOIN sml_migration_keys k ON k.participant = p.participant`,
    [participant],
  );
  return {
    ...(row?.state ? { state: row.state } : {}),
    ...(row?.migrationKey ? { migrationKey: row.migrationKey } : {}),
  };
}

export async function smlStateOf(db: Queryable, participant: string): Promise<SmlState | undefined> {
  const [row] = await db.query<{ state: SmlState }>('SELECT state FROM sml_participants WHERE participant = $1', [
    participant,
  ]);
  return row?.state;
}

/**
 * What a service provider may do with an organization's registration in the SML, which every provider serving it
 * with at least one process shares: `sole` when it is the only such provider (it may move the whole registration),
 * `shared` when others serve it too, `none` when its own participant has no process (no say, and no part in it).
 */
export async function sayOf(
  db: Queryable,
  participant: string,
  serviceProviderId: string,
): Promise<'sole' | 'shared' | 'none'> {
  const organization = parseOrganization(participant);
  const [row] = await db.query<{ mine: boolean | null; others: number }>(
    `SELECT bool_or(pa.service_provider_id = $3) AS mine, count(DISTINCT pa.service_provider_id) FILTER (WHERE pa.service_provider_id <> $3)::int AS others
       FROM participants pa
      WHERE pa.icd = $1 AND pa.organization_identifier = $2 AND ${participantIsLive('pa')}
        AND EXISTS (SELECT 1 FROM participant_processes pp WHERE pp.participant_id = pa.id)`,
    [organization?.icd ?? '', organization?.organizationIdentifier ?? '', serviceProviderId],
  );
  if (!row?.mine) return 'none';
  return row.others > 0 ? 'shared' : 'sole';
}

/**
 * Records what the SML said to a call made outside the delivery (a migration key out, its withdrawal) only while the
 * organization's state is still the one read before the call (`state`, `since`): a delivery that recorded meanwhile
 * (a delete delivered, a Create after a re-add) wins, so the registry never says what the SML no longer holds.
 */
export async function recordSmlIfUnchanged(
  db: Queryable,
  participant: string,
  state: SmlState,
  before: { state: SmlState; since: string },
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE sml_participants SET state = $2, error_fault = NULL, error_code = NULL, error_message = NULL, checked_at = now(),
            since = CASE WHEN state = $2 THEN since ELSE now() END
      WHERE participant = $1 AND state = $3 AND since = $4::timestamptz RETURNING 1`,
    [participant, state, before.state, before.since],
  );
  return rows.length > 0;
}

/** The organization's SML state and since when, exactly (for `recordSmlIfUnchanged`). */
export async function smlStateSince(
  db: Queryable,
  participant: string,
): Promise<{ state: SmlState; since: string } | undefined> {
  const [row] = await db.query<{ state: SmlState; since: string }>(
    `SELECT state, since::text AS since FROM sml_participants WHERE participant = $1`,
    [participant],
  );
  return row;
}

/** Records what the SML said; `since` moves only when the state changes. */
export async function recordSml(
  db: Queryable,
  participant: string,
  state: SmlState,
  refusal?: SmlError,
): Promise<void> {
  await db.query(
    `INSERT INTO sml_participants (participant, state, error_fault, error_code, error_message) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (participant) DO UPDATE SET state = excluded.state, error_fault = excluded.error_fault,
            error_code = excluded.error_code, error_message = excluded.error_message, checked_at = now(),
            since = CASE WHEN sml_participants.state = excluded.state THEN sml_participants.since ELSE now() END`,
    [participant, state, refusal?.fault ?? null, refusal?.code ?? null, refusal?.message ?? null],
  );
}

/** Records the organizations of a list the SML accepted as registered (`since` moves for those not registered before). */
export async function recordSmlRegistered(db: Queryable, participants: readonly string[]): Promise<void> {
  await db.query(
    `INSERT INTO sml_participants (participant, state) SELECT unnest($1::text[]), 'registered'
     ON CONFLICT (participant) DO UPDATE SET state = 'registered', error_fault = NULL, error_code = NULL,
            error_message = NULL, checked_at = now(),
            since = CASE WHEN sml_participants.state = 'registered' THEN sml_participants.since ELSE now() END`,
    [participants],
  );
}

export async function forgetSmlAll(db: Queryable, participants: readonly string[]): Promise<void> {
  await db.query('DELETE FROM sml_participants WHERE participant = ANY($1::text[])', [participants]);
}

/**
 * What the SML's delivery needs of each organization, in one read: its SML state, the migration key its provider gave,
 * and whether it has a live participant with something publishable (`liveSql` says it of `pa`).
 */
export async function smlRecordsOf(
  db: Queryable,
  participants: readonly string[],
  liveSql: string,
): Promise<Map<string, { state?: SmlState; migrationKey?: string; live: boolean }>> {
  const keys = participants.map((participant) => ({ participant, ...(parseOrganization(participant) ?? {}) }));
  const rows = await db.query<{
    participant: string;
    state: SmlState | null;
    migrationKey: string | null;
    live: boolean;
  }>(
    `SELECT k.participant, s.state, m.migration_key AS "migrationKey",
            EXISTS (SELECT 1 FROM participants pa WHERE pa.icd = k.icd AND pa.organization_identifier = k.organization_identifier
                       AND ${liveSql}) AS live
       FROM unnest($1::text[], $2::text[], $3::text[]) AS k(participant, icd, organization_identifier)
       LEFT JOIN sml_participants s ON s.participant = k.participant
       LEFT JOIN sml_migration_keys m ON m.participant = k.participant`,
    [
      keys.map((key) => key.participant),
      keys.map((key) => key.icd ?? null),
      keys.map((key) => key.organizationIdentifier ?? null),
    ],
  );
  return new Map(
    rows.map((row) => [
      row.participant,
      {
        ...(row.state ? { state: row.state } : {}),
        ...(row.migrationKey ? { migrationKey: row.migrationKey } : {}),
        live: row.live,
      },
    ]),
  );
}

export async function participantsMigratingOut(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ participant: string }>(
    `SELECT participant FROM sml_participants WHERE state = 'migrating_out'`,
  );
  return rows.map((row) => row.participant);
}

export async function forgetSml(db: Queryable, participant: string): Promise<void> {
  await db.query('DELETE FROM sml_participants WHERE participant = $1', [participant]);
}

/** Replaces what the registry believes the SML holds for this SMP as registered (sml-reconcile); one migrating out stays so. */
export async function recordRegistered(db: Queryable, participants: readonly string[]): Promise<void> {
  await db.query(`DELETE FROM sml_participants WHERE state = 'registered' AND NOT (participant = ANY($1::text[]))`, [
    participants,
  ]);
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
  await forgetDirectoryRefusal(db, participant);
}

export async function forgetPushed(db: Queryable, participant: string): Promise<void> {
  await db.query('DELETE FROM directory_participants WHERE participant = $1', [participant]);
  await forgetDirectoryRefusal(db, participant);
}

const forgetDirectoryRefusal = (db: Queryable, participant: string) =>
  db.query('DELETE FROM directory_refusals WHERE participant = $1', [participant]);

/** The Directory refused the organization for good (a 4xx): shown, and tried again on its next change. */
export async function recordDirectoryRefusal(
  db: Queryable,
  participant: string,
  refusal: DirectoryError,
): Promise<void> {
  await db.query(
    `INSERT INTO directory_refusals (participant, status, message) VALUES ($1, $2, $3)
     ON CONFLICT (participant) DO UPDATE SET status = excluded.status, message = excluded.message, refused_at = now()`,
    [participant, refusal.status ?? 0, refusal.message],
  );
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
  /** When an organization set aside is tried again. */
  nextAttemptAt: string | null;
}

/** What a provider whose participant has no process sees: it has no part in the organization's registration. */
type NoProcess = 'no_process';

export interface NetworkState {
  participant: string;
  sml: TargetState<SmlState | 'pending' | 'set_aside' | NoProcess>;
  directory: TargetState<'pushed' | 'pending' | 'waiting_for_sml' | 'set_aside' | 'refused' | NoProcess>;
}

interface SetAside {
  since: string;
  nextAttemptAt: string;
  lastError: string | null;
  waitingFor: string | null;
}

interface NetworkRow {
  smlConfigured: boolean;
  smlPendingSince: string | null;
  smlSetAside: SetAside | null;
  smlState: SmlState | null;
  smlSince: string | null;
  fault: string | null;
  code: string | null;
  message: string | null;
  cursorError: string | null;
  directoryConfigured: boolean;
  directoryPendingSince: string | null;
  directorySetAside: SetAside | null;
  directoryRefusal: { status: number; message: string; since: string } | null;
  pushedAt: string | null;
}

const none = { state: null, since: null, lastError: null, nextAttemptAt: null };

/**
 * Where one (live) participant stands, as `viewer` may see it: a provider whose participant has no process has no
 * part in its organization's registration, and sees `no_process` (nothing of the others' state). Otherwise: set aside
 * when its delivery keeps failing while the target answers the others (since then, with the last failure and the next
 * attempt); pending while a change of it waits behind a target's cursor (since the oldest such change; the cursor's
 * last error, a failure of the peer for everyone, is its error); else what the target recorded. The Directory waits
 * for the SML: an organization the SML does not hold for this SMP is not pushed.
 */
export async function networkStateOf(
  db: Queryable,
  participant: string,
  viewer: { hasSay: boolean } = { hasSay: true },
): Promise<NetworkState> {
  const pendingSince = (
    target: string,
  ) => `(SELECT ${utcInstant('min(c.changed_at)')} FROM change_log c, delivery_cursors d
      WHERE d.target = '${target}' AND c.resource = 'participant' AND c.identifier = $1 AND c.seq > d.seq)`;
  const setAside = (
    target: string,
  ) => `(SELECT json_build_object('since', ${utcInstant('a.since')}, 'nextAttemptAt', ${utcInstant('a.next_attempt_at')},
      'lastError', a.last_error, 'waitingFor', a.waiting_for) FROM delivery_set_aside a WHERE a.target = '${target}' AND a.participant = $1)`;
  const [row] = await db.query<NetworkRow>(
    `SELECT EXISTS (SELECT 1 FROM delivery_cursors WHERE target = 'sml') AS "smlConfigured",
            ${pendingSince('sml')} AS "smlPendingSince", ${setAside('sml')} AS "smlSetAside",
            s.state AS "smlState", ${utcInstant('s.since')} AS "smlSince",
            s.error_fault AS fault, s.error_code AS code, s.error_message AS message,
            (SELECT last_error FROM delivery_cursors WHERE target = 'sml') AS "cursorError",
            EXISTS (SELECT 1 FROM delivery_cursors WHERE target = 'directory') AS "directoryConfigured",
            ${pendingSince('directory')} AS "directoryPendingSince", ${setAside('directory')} AS "directorySetAside",
            (SELECT json_build_object('status', status, 'message', message, 'since', ${utcInstant('refused_at')})
               FROM directory_refusals WHERE participant = $1) AS "directoryRefusal",
            (SELECT ${utcInstant('pushed_at')} FROM directory_participants WHERE participant = $1) AS "pushedAt"
       FROM (SELECT 1) one LEFT JOIN sml_participants s ON s.participant = $1`,
    [participant],
  );
  const network = row as NetworkRow;
  if (!viewer.hasSay) {
    const noProcess = (configured: boolean) => (configured ? { ...none, state: 'no_process' as const } : none);
    return { participant, sml: noProcess(network.smlConfigured), directory: noProcess(network.directoryConfigured) };
  }
  return { participant, sml: smlView(network), directory: directoryView(network) };
}

const failure = (message: string | null) => (message === null ? null : { fault: null, code: null, message });
const setAsideView = (aside: SetAside) => ({
  state: 'set_aside' as const,
  since: aside.since,
  lastError: failure(aside.lastError),
  nextAttemptAt: aside.nextAttemptAt,
});

function smlView(row: NetworkRow): NetworkState['sml'] {
  if (!row.smlConfigured) return none;
  if (row.smlSetAside !== null) return setAsideView(row.smlSetAside);
  if (row.smlPendingSince !== null || row.smlState === null) {
    return {
      ...none,
      state: 'pending',
      since: row.smlPendingSince,
      lastError: row.smlPendingSince === null ? null : failure(row.cursorError),
    };
  }
  const lastError = row.message === null ? null : { fault: row.fault, code: row.code, message: row.message };
  return { ...none, state: row.smlState, since: row.smlSince, lastError };
}

function directoryView(row: NetworkRow): NetworkState['directory'] {
  if (!row.directoryConfigured) return none;
  const aside = row.directorySetAside;
  if (aside !== null && aside.waitingFor === null) return setAsideView(aside);
  if (aside !== null) return { ...none, state: 'waiting_for_sml' };
  if (row.directoryPendingSince !== null) return { ...none, state: 'pending', since: row.directoryPendingSince };
  const refusal = row.directoryRefusal;
  if (refusal !== null)
    return {
      ...none,
      state: 'refused',
      since: refusal.since,
      lastError: { fault: null, code: `HTTP ${refusal.status}`, message: refusal.message },
    };
  if (row.pushedAt !== null) return { ...none, state: 'pushed', since: row.pushedAt };
  return { ...none, state: 'waiting_for_sml' };
}

export interface StuckParticipant {
  participant: string;
  /** The target it is stuck at. */
  target: 'sml' | 'directory';
  state: Exclude<SmlState, 'registered' | 'migrating_out'> | 'pending' | 'set_aside';
  since: string;
  lastError: SmlRefusal | null;
  servedBy: ServedBy[];
}

/** A participant of an organization: its name and the service provider that serves it. */
interface ServedBy {
  name: string | null;
  serviceProvider: { identifier: string; title: string };
}

/** Who serves each organization (`iso6523-actorid-upis::{icd}:{organizationIdentifier}`) now, by provider title. */
async function servedByOf(db: Queryable, organizations: readonly string[]): Promise<Map<string, ServedBy[]>> {
  const keys = [...new Set(organizations)].flatMap((participant) => {
    const organization = parseOrganization(participant);
    return organization ? [{ participant, ...organization }] : [];
  });
  const rows = await db.query<ServedBy & { participant: string }>(
    `SELECT k.participant, pa.name, json_build_object('identifier', sp.id, 'title', sp.title) AS "serviceProvider"
       FROM unnest($1::text[], $2::text[], $3::text[]) AS k(participant, icd, organization_identifier)
       JOIN participants pa ON pa.icd = k.icd AND pa.organization_identifier = k.organization_identifier AND ${participantIsLive('pa')}
       JOIN service_providers sp ON sp.id = pa.service_provider_id
      ORDER BY k.participant, sp.title, sp.id`,
    [keys.map((key) => key.participant), keys.map((key) => key.icd), keys.map((key) => key.organizationIdentifier)],
  );
  const served = new Map<string, ServedBy[]>();
  for (const { participant, ...row } of rows) served.set(participant, [...(served.get(participant) ?? []), row]);
  return served;
}

/**
 * The participants whose place in the network is stuck, oldest first, at most `limit` per state: at the SML held by
 * another SMP, refused, and pending behind its cursor; at either target set aside (failing while the target answers
 * the others); refused by the Directory. Each with the participants that serve the organization now, by provider.
 */
export async function stuckParticipants(db: Queryable, limit: number): Promise<StuckParticipant[]> {
  type Stuck = Omit<StuckParticipant, 'servedBy'>;
  const recorded = (state: StuckParticipant['state']) =>
    db.query<Stuck>(
      `SELECT participant, 'sml' AS target, state, ${utcInstant('since')} AS since,
            json_build_object('fault', error_fault, 'code', error_code, 'message', error_message) AS "lastError"
       FROM sml_participants WHERE state = $1 ORDER BY since, participant LIMIT $2`,
      [state, limit],
    );
  const setAside = db.query<Stuck>(
    `SELECT participant, target, 'set_aside' AS state, ${utcInstant('since')} AS since,
            json_build_object('fault', NULL, 'code', NULL, 'message', last_error) AS "lastError"
       FROM delivery_set_aside WHERE waiting_for IS NULL ORDER BY since, participant LIMIT $1`,
    [limit],
  );
  const refusedByDirectory = db.query<Stuck>(
    `SELECT participant, 'directory' AS target, 'refused' AS state, ${utcInstant('refused_at')} AS since,
            json_build_object('fault', NULL, 'code', 'HTTP ' || status, 'message', message) AS "lastError"
       FROM directory_refusals ORDER BY refused_at, participant LIMIT $1`,
    [limit],
  );
  // The next entries behind the cursor only, however far behind it is.
  const pending = db.query<Stuck>(
    `SELECT e.identifier AS participant, 'sml' AS target, 'pending' AS state, ${utcInstant('min(e.changed_at)')} AS since, NULL AS "lastError"
       FROM (SELECT c.identifier, c.changed_at, c.seq FROM change_log c, delivery_cursors d
              WHERE d.target = 'sml' AND c.resource = 'participant' AND c.seq > d.seq ORDER BY c.seq LIMIT $1 * 10) e
      GROUP BY e.identifier ORDER BY min(e.seq) LIMIT $1`,
    [limit],
  );
  const stuck = (
    await Promise.all([recorded('held_elsewhere'), recorded('refused'), setAside, refusedByDirectory, pending])
  ).flat();
  const served = await servedByOf(
    db,
    stuck.map((row) => row.participant),
  );
  return stuck.map((row) => ({ ...row, servedBy: served.get(row.participant) ?? [] }));
}
