import { utcInstant } from '../db/sql.js';
import type { Queryable } from '../db/database.js';
import { participantIsLive } from '../participants/repository.js';

/** Days ahead the removals are listed by default, and at most. */
export const REMOVALS_DEFAULT_DAYS = 90;
export const REMOVALS_MAX_DAYS = 3660;
/** Entries one answer lists at most (the counts per instant count them all). */
export const REMOVALS_MAX_LIMIT = 1000;

/** What one participant loses at one removal instant: a process, or a document type of one of its processes. */
export interface ComingRemoval {
  removedFrom: string;
  participant: { identifier: string; qualifiedIdentifier: string };
  serviceProvider: { identifier: string; title: string };
  process: { identifier: string; qualifiedIdentifier: string };
  /** Null when the process itself is removed (and every document type with it). */
  documentType: { identifier: string; qualifiedIdentifier: string } | null;
}

/** Per removal instant: how many participants lose something then, and how many entries they lose. */
export interface RemovalCount {
  removedFrom: string;
  participants: number;
  entries: number;
}

export interface ComingRemovals {
  counts: RemovalCount[];
  removals: ComingRemoval[];
  /** All entries, of which `removals` lists the first `limit` (by instant, participant, process, document type). */
  total: number;
}

/**
 * What the live participants (of `serviceProviderId` $1; all when null) lose within `days` $2 from now: each process past
 * its removal instant then, and each document type of their processes (unless its process goes first or with it).
 */
export const LOST = `
  WITH lost AS (
    SELECT pa.id AS participant_id, pa.icd, pa.organization_identifier, pa.service_provider_id, p.id AS process_id,
           p.scheme || '::' || p.value AS process, NULL::uuid AS document_type_id, NULL::text AS document_type, p.removed_from
      FROM participants pa JOIN participant_processes pp ON pp.participant_id = pa.id JOIN processes p ON p.id = pp.process_id
     WHERE ${participantIsLive('pa')} AND ($1::uuid IS NULL OR pa.service_provider_id = $1)
       AND p.removed_from > now() AND p.removed_from <= now() + $2::int * interval '1 day'
    UNION ALL
    SELECT pa.id, pa.icd, pa.organization_identifier, pa.service_provider_id, p.id, p.scheme || '::' || p.value,
           d.id, d.scheme || '::' || d.value, d.removed_from
      FROM participants pa JOIN participant_processes pp ON pp.participant_id = pa.id JOIN processes p ON p.id = pp.process_id
      JOIN process_document_types pdt ON pdt.process_id = p.id JOIN document_types d ON d.id = pdt.document_type_id
     WHERE ${participantIsLive('pa')} AND ($1::uuid IS NULL OR pa.service_provider_id = $1)
       AND d.removed_from > now() AND d.removed_from <= now() + $2::int * interval '1 day'
       AND (p.removed_from IS NULL OR p.removed_from > d.removed_from))`;

/** Per coming removal instant within `days`, what the participants of a service provider (all when null) lose then. */
export function removalCounts(db: Queryable, serviceProviderId: string | null, days: number): Promise<RemovalCount[]> {
  return db.query<RemovalCount>(
    `${LOST} SELECT ${utcInstant('removed_from')} AS "removedFrom", count(DISTINCT participant_id)::int AS participants, count(*)::int AS entries
       FROM lost GROUP BY removed_from ORDER BY removed_from`,
    [serviceProviderId, days],
  );
}

/** The coming removals of a service provider's participants (all when `serviceProviderId` is null), within `days`. */
export async function comingRemovals(
  db: Queryable,
  serviceProviderId: string | null,
  days: number,
  limit: number,
): Promise<ComingRemovals> {
  const counts = await removalCounts(db, serviceProviderId, days);
  const removals = await db.query<ComingRemoval>(
    `${LOST} SELECT ${utcInstant('l.removed_from')} AS "removedFrom",
            json_build_object('identifier', l.participant_id,
              'qualifiedIdentifier', 'iso6523-actorid-upis::' || l.icd || ':' || l.organization_identifier) AS participant,
            json_build_object('identifier', sp.id, 'title', sp.title) AS "serviceProvider",
            json_build_object('identifier', l.process_id, 'qualifiedIdentifier', l.process) AS process,
            CASE WHEN l.document_type_id IS NULL THEN NULL
                 ELSE json_build_object('identifier', l.document_type_id, 'qualifiedIdentifier', l.document_type) END AS "documentType"
       FROM lost l JOIN service_providers sp ON sp.id = l.service_provider_id
      ORDER BY l.removed_from, l.icd, l.organization_identifier, l.participant_id, l.process, l.document_type NULLS FIRST
      LIMIT $3`,
    [serviceProviderId, days, limit],
  );
  return { counts, removals, total: counts.reduce((sum, count) => sum + count.entries, 0) };
}
