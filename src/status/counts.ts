import type { CatalogueCache } from '../catalogue-cache/catalogue-cache.js';
import { SML_STATES, type SmlState } from '../network/network.js';
import type { Queryable } from '../db/database.js';
import { participantIsLive } from '../participants/repository.js';
import { IDENTIFIER_FAULT_ROWS } from '../participants/identifier-faults.js';

/**
 * Up to this many rows a count is exact: counting them reads at most this many index or table entries, a few
 * milliseconds. Beyond it the count is PostgreSQL's estimate of the same rows (the planner's, from the table's
 * statistics and its current size), marked as such: an exact count of two million participants would read every
 * one of them on each request.
 */
export const EXACT_COUNT_LIMIT = 100_000;

/** A number of rows: exact, or an estimate when there are more than EXACT_COUNT_LIMIT. */
export interface Count {
  count: number;
  exact: boolean;
}

type Plan = [{ Plan: { 'Plan Rows': number } }];

/**
 * The rows `rows` (a FROM clause with its WHERE, constant SQL) hold: counted while at most EXACT_COUNT_LIMIT, else
 * estimated, never below the limit it passed.
 */
async function boundedCount(db: Queryable, rows: string): Promise<Count> {
  const [counted] = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM (SELECT 1 FROM ${rows} LIMIT ${EXACT_COUNT_LIMIT + 1}) bounded`,
  );
  const count = counted?.count ?? 0;
  if (count <= EXACT_COUNT_LIMIT) return { count, exact: true };
  const [explained] = await db.query<{ 'QUERY PLAN': Plan }>(`EXPLAIN (FORMAT JSON) SELECT 1 FROM ${rows}`);
  const estimate = Math.round(explained?.['QUERY PLAN'][0].Plan['Plan Rows'] ?? 0);
  return { count: Math.max(estimate, EXACT_COUNT_LIMIT + 1), exact: false };
}

export interface Counts {
  serviceProviders: number;
  accessPointProviders: number;
  accessPoints: number;
  participants: Count;
  /** Live participants whose organization identifier breaks its scheme's rule (participants/identifier-faults.ts). */
  identifierFaults: Count;
  /** Organizations by what the SML said to them; null without an SML delivery. */
  sml: Record<SmlState, Count> | null;
  /** Organizations pushed to the Directory; null without a Directory delivery. */
  directory: { pushed: Count } | null;
}

/** The kinds the catalogue holds are counted in memory, exactly; the rest by bounded counts. `targets`: the deliveries configured. */
export async function counts(
  db: Queryable,
  catalogue: CatalogueCache,
  targets: { sml: boolean; directory: boolean },
): Promise<Counts> {
  const [serviceProviders, accessPointProviders, accessPoints] = await Promise.all(
    (['service-provider', 'access-point-provider', 'access-point'] as const).map(
      async (kind) => (await catalogue.rows(kind)).rows.length,
    ),
  );
  const bySmlState = async () =>
    Object.fromEntries(
      await Promise.all(
        SML_STATES.map(
          async (state) => [state, await boundedCount(db, `sml_participants WHERE state = '${state}'`)] as const,
        ),
      ),
    ) as Record<SmlState, Count>;
  return {
    serviceProviders: serviceProviders as number,
    accessPointProviders: accessPointProviders as number,
    accessPoints: accessPoints as number,
    participants: await boundedCount(db, `participants pa WHERE ${participantIsLive('pa')}`),
    identifierFaults: await boundedCount(db, IDENTIFIER_FAULT_ROWS),
    sml: targets.sml ? await bySmlState() : null,
    directory: targets.directory ? { pushed: await boundedCount(db, 'directory_participants') } : null,
  };
}
