import { PLAN_PER_VALUES, type Queryable } from '../db/database.js';
import { Conditions } from '../db/sql.js';
import { PROVIDER_RESOURCES } from '../db/change-log.js';
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
    conditions.where(
      `c.resource = ANY(${conditions.param(PROVIDER_RESOURCES)}::text[]) AND ${conditions.param(scope)}::uuid = ANY(c.service_provider_ids)`,
    );
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

/**
 * The entries `pageSql` reads, in its order, as long as their JSON stays within `maxBytes` (the first one always):
 * `read` counts every entry of the page, so a caller sees whether the budget cut it short. No more than the budget
 * is ever put into one string, which a page of large entries would otherwise take past the database's and the
 * runtime's limits.
 */
function entriesWithin(pageSql: string, maxBytes: string) {
  return `WITH numbered AS (SELECT row_number() OVER () AS number, to_json(e) AS entry FROM (${pageSql}) e),
               sized AS (SELECT number, entry, sum(octet_length(entry::text)) OVER (ORDER BY number) AS bytes FROM numbered)
          SELECT (SELECT count(*)::int FROM sized) AS read,
                 (SELECT coalesce(json_agg(entry ORDER BY number), '[]'::json) FROM sized WHERE number = 1 OR bytes <= ${maxBytes}) AS entries`;
}

interface EntriesWithin {
  read: number;
  entries: ChangeEntry[];
}

/**
 * A page of the audit trail: its entries up to `maxBytes` of JSON (`read` says how many the page had), and the
 * number of entries the filters match.
 */
export async function findChanges(
  db: Queryable,
  filters: ChangeFilters,
  scope: ChangeScope,
  page: PageRequest,
  maxBytes: number,
) {
  const conditions = conditionsOf(filters, scope).where('c.seq IS NOT NULL');
  // Planned per values where a filter's values decide the index or the client chose the order, as selectPage does.
  const planning = conditions.params.length > 0 || page.orders.length > 0 ? `${PLAN_PER_VALUES} ` : '';
  const pageSql = `SELECT ${COLUMNS} FROM change_log c ${conditions.clause} ${page.orderBy}
                    LIMIT ${conditions.param(page.size)} OFFSET ${conditions.param(page.offset)}`;
  const [row] = await db.query<EntriesWithin & { total: number }>(
    `${planning}SELECT (SELECT count(*)::int FROM change_log c ${conditions.clause}) AS total, within.*
       FROM (${entriesWithin(pageSql, conditions.param(maxBytes))}) within`,
    conditions.params,
  );
  return { total: row?.total ?? 0, read: row?.read ?? 0, rows: row?.entries ?? [] };
}

/**
 * Up to `limit` entries after `after` in log order, and no more than `maxBytes` of them (the first one always), and
 * the cursor to continue from: the last entry's position when the answer is full or was cut short, else the last
 * position committed (read in the same snapshot, so nothing at or below it can still appear).
 */
export async function changesAfter(
  db: Queryable,
  after: number,
  limit: number,
  filters: ChangeFilters,
  scope: ChangeScope,
  maxBytes: number,
) {
  const conditions = conditionsOf(filters, scope);
  conditions.where(`c.seq > ${conditions.param(after)}`).where('c.seq <= (SELECT seq FROM change_log_position)');
  const pageSql = `SELECT ${COLUMNS} FROM change_log c ${conditions.clause} ORDER BY c.seq LIMIT ${conditions.param(limit)}`;
  const [row] = await db.query<EntriesWithin & { position: number }>(
    `SELECT (SELECT seq FROM change_log_position) AS position, within.*
       FROM (${entriesWithin(pageSql, conditions.param(maxBytes))}) within`,
    conditions.params,
  );
  const entries = row?.entries ?? [];
  const read = row?.read ?? 0;
  const more = read === limit || entries.length < read;
  const next = more ? (entries.at(-1)?.seq ?? after) : Math.max(after, row?.position ?? after);
  return { entries, next };
}
