/**
 * What Enhetsregisteret last said of each Norwegian organization (migration 078): recorded when a participant is
 * registered and at each re-check; a flag (any state but `known`) is raised, changed and cleared through the change log.
 */
import { appendChange, type Actor } from '../db/change-log.js';
import type { Queryable } from '../db/database.js';
import { Conditions, selectPage } from '../db/sql.js';
import type { PageRequest, Sortable } from '../core/paging.js';
import { participantIsLive } from '../participants/repository.js';
import { qualifiedIdentifierOf } from '../participants/identifiers.js';
import type { RegisterAnswer } from './client.js';

export const NORWEGIAN_ICD = '0192';
export const FLAG_STATES = ['unconfirmed', 'unknown', 'deleted'] as const;
export type FlagState = (typeof FLAG_STATES)[number];
type CheckState = 'known' | FlagState;

/** An answer to record: the register's, for one organization number. */
export interface RecordedAnswer {
  organizationIdentifier: string;
  answer: RegisterAnswer;
}

/** A flag as the change log keeps it. */
interface FlagEntry {
  qualifiedIdentifier: string;
  state: FlagState;
  deletedOn: string | null;
}

const stateOf = (answer: RegisterAnswer): CheckState | null => {
  if (answer.kind === 'unanswered') return null;
  return answer.kind;
};

const flagOf = (organizationIdentifier: string, state: string | null, deletedOn: string | null): FlagEntry | null =>
  state === null || state === 'known'
    ? null
    : {
        qualifiedIdentifier: qualifiedIdentifierOf({ icd: NORWEGIAN_ICD, organizationIdentifier }),
        state: state as FlagState,
        deletedOn,
      };

/**
 * Stores each answer (an organization named twice: its last answer), and appends a change for each flag it raises,
 * changes or clears. An unanswered lookup keeps what the register said before, or marks the organization `unconfirmed`
 * when it never said anything; it is asked again at once. An answer is asked again `recheckAfterSeconds` later.
 */
export async function recordAnswers(
  tx: Queryable,
  actor: Actor,
  answers: readonly RecordedAnswer[],
  recheckAfterSeconds: number,
): Promise<void> {
  const byOrganization = new Map(answers.map(({ organizationIdentifier, answer }) => [organizationIdentifier, answer]));
  if (byOrganization.size === 0) return;
  const rows = [...byOrganization].map(([organization, answer]) => ({
    organization,
    state: stateOf(answer),
    deleted_on: answer.kind === 'deleted' ? answer.deletedOn : null,
  }));
  const recorded = await tx.query<{
    organization: string;
    beforeState: string | null;
    beforeDeletedOn: string | null;
    state: string | null;
    deletedOn: string | null;
  }>(
    `WITH input AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(organization text, state text, deleted_on date)),
          before AS (SELECT c.organization_identifier, c.state, c.deleted_on FROM national_register_checks c
                      WHERE c.organization_identifier IN (SELECT organization FROM input) FOR UPDATE),
          stored AS (
            INSERT INTO national_register_checks AS c (organization_identifier, state, deleted_on, checked_at, due_at)
            SELECT organization, coalesce(state, 'unconfirmed'), deleted_on,
                   CASE WHEN state IS NULL THEN NULL ELSE now() END,
                   CASE WHEN state IS NULL THEN NULL ELSE now() + $2 * interval '1 second' END
              FROM input
            ON CONFLICT (organization_identifier) DO UPDATE SET
              state = CASE WHEN excluded.checked_at IS NULL THEN coalesce(c.state, 'unconfirmed') ELSE excluded.state END,
              deleted_on = CASE WHEN excluded.checked_at IS NULL THEN c.deleted_on ELSE excluded.deleted_on END,
              checked_at = coalesce(excluded.checked_at, c.checked_at),
              due_at = excluded.due_at,
              state_since = CASE WHEN c.state IS DISTINCT FROM
                (CASE WHEN excluded.checked_at IS NULL THEN coalesce(c.state, 'unconfirmed') ELSE excluded.state END)
                THEN now() ELSE c.state_since END
            RETURNING c.organization_identifier, c.state, c.deleted_on)
     SELECT s.organization_identifier AS organization, b.state AS "beforeState", to_char(b.deleted_on, 'YYYY-MM-DD') AS "beforeDeletedOn",
            s.state, to_char(s.deleted_on, 'YYYY-MM-DD') AS "deletedOn"
       FROM stored s LEFT JOIN before b ON b.organization_identifier = s.organization_identifier
      ORDER BY s.organization_identifier`,
    [JSON.stringify(rows), recheckAfterSeconds],
  );
  const changes = recorded.flatMap((row) => {
    const before = flagOf(row.organization, row.beforeState, row.beforeDeletedOn);
    const after = flagOf(row.organization, row.state, row.deletedOn);
    if (JSON.stringify(before) === JSON.stringify(after)) return [];
    const identifier = qualifiedIdentifierOf({ icd: NORWEGIAN_ICD, organizationIdentifier: row.organization });
    const operation =
      before === null ? ('create' as const) : after === null ? ('delete' as const) : ('update' as const);
    return [{ resource: 'register-flag' as const, identifier, operation, before, after }];
  });
  await appendChange(tx, actor, changes);
}

/** A flagged organization's live participant, as the flag listing shows it. */
export interface FlaggedParticipant {
  qualifiedIdentifier: string;
  participantIdentifier: string;
  serviceProvider: string;
  name: string | null;
  state: FlagState;
  deletedOn: string | null;
  flaggedSince: string;
  checkedAt: string | null;
}

const INSTANT = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const FLAGGED = `national_register_checks c
  JOIN participants pa ON pa.icd = '${NORWEGIAN_ICD}' AND pa.organization_identifier = c.organization_identifier`;
const FLAGGED_VIEW = `'iso6523-actorid-upis::${NORWEGIAN_ICD}:' || pa.organization_identifier AS "qualifiedIdentifier",
  pa.id AS "participantIdentifier", pa.service_provider_id AS "serviceProvider", pa.name, c.state,
  to_char(c.deleted_on, 'YYYY-MM-DD') AS "deletedOn", ${INSTANT('c.state_since')} AS "flaggedSince", ${INSTANT('c.checked_at')} AS "checkedAt"`;

export const FLAG_SORTABLE: Sortable = {
  organizationIdentifier: 'pa.organization_identifier',
  state: 'c.state',
  flaggedSince: 'c.state_since',
  deletedOn: 'c.deleted_on',
};
export const FLAG_TIE_BREAKER = 'pa.id';

/** The live participants of flagged organizations: a service provider's own (`scope`), or every one (null). */
export function findFlagged(db: Queryable, page: PageRequest, scope: string | null, state?: FlagState) {
  const conditions = new Conditions().where(`c.state <> 'known'`).where(participantIsLive('pa'));
  if (scope !== null) conditions.where(`pa.service_provider_id = ${conditions.param(scope)}`);
  if (state !== undefined) conditions.where(`c.state = ${conditions.param(state)}`);
  return selectPage<FlaggedParticipant>(db, { select: FLAGGED_VIEW, from: FLAGGED, conditions, page });
}

/** Flagged organizations that have a live participant, by state: the status's and the metric's counts. */
export async function flagCounts(db: Queryable): Promise<Record<FlagState, number>> {
  const rows = await db.query<{ state: FlagState; count: number }>(
    `SELECT c.state, count(*)::int AS count FROM national_register_checks c
      WHERE c.state <> 'known' AND EXISTS (SELECT 1 FROM participants pa WHERE pa.icd = '${NORWEGIAN_ICD}'
            AND pa.organization_identifier = c.organization_identifier AND ${participantIsLive('pa')})
      GROUP BY c.state`,
  );
  const counts = Object.fromEntries(FLAG_STATES.map((state) => [state, 0])) as Record<FlagState, number>;
  for (const row of rows) counts[row.state] = row.count;
  return counts;
}

/**
 * Takes (or keeps) the re-check's lease for `leaseMs`: true while this instance (`me`) holds it. One instance at a time
 * re-checks, so the register is asked at the configured rate whatever the number of instances.
 */
export async function holdRecheckLease(db: Queryable, me: string, leaseMs: number): Promise<boolean> {
  const rows = await db.query(
    `UPDATE national_register_recheck SET leased_by = $1, leased_until = now() + $2 * interval '1 millisecond'
      WHERE leased_until IS NULL OR leased_until < now() OR leased_by = $1 RETURNING 1`,
    [me, leaseMs],
  );
  return rows.length > 0;
}

export const releaseRecheckLease = (db: Queryable, me: string) =>
  db.query('UPDATE national_register_recheck SET leased_by = NULL, leased_until = NULL WHERE leased_by = $1', [me]);

/**
 * Rows for the Norwegian organizations of live participants that have none (registered before the register was
 * configured, or by a path that did not ask): the re-check asks them first. One statement; conflicts are skipped.
 */
export const addUnasked = (db: Queryable) =>
  db.query(
    `INSERT INTO national_register_checks (organization_identifier)
   SELECT DISTINCT pa.organization_identifier FROM participants pa
    WHERE pa.icd = '${NORWEGIAN_ICD}' AND ${participantIsLive('pa')}
      AND NOT EXISTS (SELECT 1 FROM national_register_checks c WHERE c.organization_identifier = pa.organization_identifier)
   ON CONFLICT (organization_identifier) DO NOTHING`,
  );

/**
 * The organization due longest for a re-check (never asked first), and whether it has a live participant: one
 * without is not asked but put off (its participants ended; a new one records its own answer).
 */
export async function nextDue(db: Queryable): Promise<{ organization: string; live: boolean } | undefined> {
  const [row] = await db.query<{ organization: string; live: boolean }>(
    `SELECT c.organization_identifier AS organization,
            EXISTS (SELECT 1 FROM participants pa WHERE pa.icd = '${NORWEGIAN_ICD}'
                     AND pa.organization_identifier = c.organization_identifier AND ${participantIsLive('pa')}) AS live
       FROM national_register_checks c
      WHERE c.due_at IS NULL OR c.due_at <= now()
      ORDER BY c.due_at NULLS FIRST, c.organization_identifier LIMIT 1`,
  );
  return row;
}

/** The organization is asked again only `seconds` from now (a register that failed is not asked again at once). */
export const postponeCheck = (db: Queryable, organization: string, seconds: number) =>
  db.query(
    `UPDATE national_register_checks SET due_at = now() + $2 * interval '1 second' WHERE organization_identifier = $1`,
    [organization, seconds],
  );
