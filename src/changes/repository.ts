import type { Queryable } from '../db/database.js';
import { Conditions, selectPage } from '../db/sql.js';
import type { PageRequest, Sortable } from '../core/paging.js';
import type { ChangeEntry, ChangeFilters } from './schemas.js';

/** Whose changes a caller sees: a service provider's id (the history of its participants), or null for all. */
export type ChangeScope = string | null;

const COLUMNS = `c.seq, c.resource, c.identifier, c.operation,
  to_char(c.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "changedAt", c.origin,
  CASE WHEN c.username IS NULL THEN NULL
       ELSE json_build_object('identifier', c.user_id, 'username', c.username, 'role', c.role) END AS "user",
  c.acting_provider_id AS "actingProvider", c.request_id AS "requestId",
  change_log_state(c.before) AS before, change_log_state(c.after) AS after`;

export const CHANGE_SORTABLE: Sortable = { seq: 'c.seq', changedAt: 'c.changed_at' };
/** Newest first unless the caller sorts otherwise. */
export const CHANGE_TIE_BREAKER = 'c.seq DESC';

function conditionsOf(filters: ChangeFilters, scope: ChangeScope): Conditions {
  const conditions = new Conditions();
  if (scope !== null) {
    conditions.where(`c.resource = 'participant' AND ${conditions.param(scope)}::uuid = ANY(c.service_provider_ids)`);
  }
  if (filters.resource) conditions.where(`c.resource = ${conditions.param(filters.resource)}`);
  if (filters.identifier) conditions.where(`c.identifier = lower(${conditions.param(filters.identifier)})`);
  if (filters.operation) conditions.where(`c.operation = ${conditions.param(filters.operation)}`);
  if (filters.user) conditions.where(`lower(c.username) = lower(${conditions.param(filters.user)})`);
  if (filters.provider) {
    const provider = conditions.param(filters.provider);
    conditions.where(`(c.acting_provider_id = ${provider}::uuid OR ${provider}::uuid = ANY(c.service_provider_ids))`);
  }
  if (filters.from) conditions.where(`c.changed_at >= ${conditions.param(filters.from)}::timestamptz`);
  if (filters.to) conditions.where(`c.changed_at < ${conditions.param(filters.to)}::timestamptz`);
  return conditions;
}

export function findChanges(db: Queryable, filters: ChangeFilters, scope: ChangeScope, page: PageRequest) {
  return selectPage<ChangeEntry>(db, {
    select: COLUMNS, from: 'change_log c', conditions: conditionsOf(filters, scope).where('c.seq IS NOT NULL'),
    page,
  });
}

/**
 * Up to `limit` entries after `after` in log order, and the cursor to continue from: the last entry's position
 * when the answer is full, else the last position committed (read in the same snapshot, so nothing at or below
 * it can still appear).
 */
export async function changesAfter(db: Queryable, after: number, limit: number, filters: ChangeFilters, scope: ChangeScope) {
  const conditions = conditionsOf(filters, scope);
  conditions.where(`c.seq > ${conditions.param(after)}`).where('c.seq <= (SELECT seq FROM change_log_position)');
  const limitParam = conditions.param(limit);
  const [row] = await db.query<{ position: number; entries: ChangeEntry[] }>(
    `SELECT (SELECT seq FROM change_log_position) AS position,
            (SELECT coalesce(json_agg(e ORDER BY e.seq), '[]'::json)
               FROM (SELECT ${COLUMNS} FROM change_log c ${conditions.clause} ORDER BY c.seq LIMIT ${limitParam}) e) AS entries`,
    conditions.params,
  );
  const entries = row?.entries ?? [];
  const next = entries.length === limit ? (entries.at(-1)?.seq ?? after) : Math.max(after, row?.position ?? after);
  return { entries, next };
}
