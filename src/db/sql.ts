import { NotFoundError } from '../core/errors.js';
import type { PageRequest } from '../core/paging.js';
import { PLAN_PER_VALUES, type Queryable } from './database.js';

/** Collects the conditions of a WHERE clause and their parameters, numbered in order. */
/** A timestamptz column as the API writes instants: ISO 8601 in UTC, to the second (`2026-12-03T10:00:00Z`). */
export const utcInstant = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;

export class Conditions {
  readonly params: unknown[] = [];
  private readonly terms: string[] = [];

  /** Adds a parameter and returns its placeholder (`$n`). */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  where(condition: string): this {
    this.terms.push(condition);
    return this;
  }

  get clause(): string {
    return this.terms.length > 0 ? `WHERE ${this.terms.join(' AND ')}` : '';
  }
}

/** `text` as a literal inside a LIKE/ILIKE pattern: its `%`, `_` and `\` match only themselves. */
export function escapeLikeWildcards(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

export interface PageQuery {
  /** The SELECT list, its aliases being the response's property names. */
  select: string;
  /** FROM and joins, naming each table by the alias that `select`, the conditions and `orderBy` use. */
  from: string;
  conditions: Conditions;
  /** The page asked for: its order (`orderBy` names the tables by the aliases of `from`), size and offset. */
  page: PageRequest;
  /**
   * A unique column of `from` (its primary key): when given, the page's keys are found first and only the page's
   * rows are read, so an index holding the filtered and sorted columns finds the page without reading the rows
   * it passes over.
   */
  key?: string;
  /**
   * With `key`, for a filter whose every hit is read from the table anyway (a trigram match is rechecked there):
   * the total is counted in the scan that finds the page, so the hits are read once, and the page is never
   * looked for by walking an index in page order through rows that fail the filter (a rare fragment walked a
   * large part of the table). `from` is then one table, named by the alias that `key` uses.
   */
  countInPageScan?: boolean;
  /** The total, when the caller knows it already (the participants' counts kept in memory): it is not counted again. */
  total?: number;
}

/** The total and one page in a single statement, so both come from one snapshot. */
export async function selectPage<T>(db: Queryable, query: PageQuery): Promise<{ total: number; rows: T[] }> {
  const {
    conditions,
    page: { orderBy },
  } = query;
  const filtered = conditions.params.length > 0;
  const where = conditions.clause;
  const limit = conditions.param(query.page.size);
  const offset = conditions.param(query.page.offset);
  const count =
    query.total === undefined
      ? `SELECT count(*)::int FROM ${query.from} ${where}`
      : `SELECT ${conditions.param(query.total)}::int`;
  const countInPageScan = query.countInPageScan === true && query.total === undefined;
  const page = `${orderBy} LIMIT ${limit} OFFSET ${offset}`;
  let sql: string;
  if (query.key === undefined) {
    sql = `SELECT (${count}) AS total,
                  (SELECT coalesce(json_agg(page), '[]'::json)
                     FROM (SELECT ${query.select} FROM ${query.from} ${where} ${page}) page) AS content`;
  } else {
    const { key } = query;
    // OFFSET 0 keeps the filter's own plan (an index scan of the hits); count(*) OVER () sees all of them.
    const keys = countInPageScan
      ? `SELECT ${key} AS key, count(*) OVER () AS total
           FROM (SELECT * FROM ${query.from} ${where} OFFSET 0) ${key.split('.')[0]} ${page}`
      : `SELECT ${key} AS key FROM ${query.from} ${where} ${page}`;
    // A page past the last hit has no row to carry the total: only then is it counted on its own.
    const total = countInPageScan ? `coalesce((SELECT total FROM page_keys LIMIT 1), (${count}))` : `(${count})`;
    sql = `WITH page_keys AS MATERIALIZED (${keys})
           SELECT ${total}::int AS total,
                  (SELECT coalesce(json_agg(page), '[]'::json)
                     FROM (SELECT ${query.select} FROM ${query.from} WHERE ${key} IN (SELECT key FROM page_keys)
                           ${orderBy}) page) AS content`;
  }
  // A filter's values decide which index finds the page; an unfiltered page in the default order is planned once and
  // reused. The orders clients choose are too many to keep a statement of each on every connection.
  const planOnce = !filtered && query.page.orders.length === 0;
  const statement = planOnce ? sql : `${PLAN_PER_VALUES} ${sql}`;
  const [result] = await db.query<{ total: number; content: T[] }>(statement, conditions.params);
  return { total: result?.total ?? 0, rows: result?.content ?? [] };
}

/** Where a resource's responses are read from: its SELECT list over `from`, and the column of its UUID. */
export interface ResourceTable {
  select: string;
  from: string;
  id: string;
}

/** One page of all the resource's rows, in the page's order. */
function selectAllPage<T>(db: Queryable, table: ResourceTable, page: PageRequest) {
  const { select, from } = table;
  return selectPage<T>(db, { select, from, conditions: new Conditions(), page });
}

/** The resource with UUID `id`; the 404 of an unknown identifier when there is none. */
async function selectById<T>(db: Queryable, table: ResourceTable, id: string): Promise<T> {
  const [row] = await db.query<T>(`SELECT ${table.select} FROM ${table.from} WHERE ${table.id} = $1`, [id]);
  if (!row) throw NotFoundError.instance(id);
  return row;
}

/** The two reads every resource has, over its table: a page of all rows, and one row by UUID (else 404). */
export function resourceReads<T>(table: ResourceTable) {
  return {
    findAll: (db: Queryable, page: PageRequest) => selectAllPage<T>(db, table, page),
    getById: (db: Queryable, id: string) => selectById<T>(db, table, id),
  };
}
