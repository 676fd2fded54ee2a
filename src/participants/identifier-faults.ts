/**
 * The participants whose organization identifier breaks its scheme's rule (value-rules.ts): registered before the
 * rules (checked here after a start), or while IDENTIFIER_VALUE_CHECKS was false. Never changed for it: listed for
 * their provider and the authority, and counted in the status (docs/design/participants.md,
 * "Identifiers").
 */
import type { Database, Queryable } from '../db/database.js';
import { Conditions, selectPage } from '../db/sql.js';
import type { PageRequest } from '../core/paging.js';
import { participantColumns, participantIsLive, type Scope } from './repository.js';
import type { ParticipantWithFault } from './schemas.js';
import { valueFaultOf } from './value-rules.js';

/** The rows one check of the unchecked participants reads and marks at a time, in one short transaction. */
const CHECK_BATCH = 1000;

/**
 * Checks every participant not checked yet (registered before the rules came, or inserted by other means than the
 * service's writes) and records its fault, batch by batch, until none is left or `stopped`; returns how many were
 * checked. Instances starting together share the work: each batch skips the rows another one holds.
 */
export async function checkUncheckedIdentifiers(db: Database, stopped: () => boolean = () => false): Promise<number> {
  let checked = 0;
  while (!stopped()) {
    const count = await db.transaction(async (tx) => {
      const rows = await tx.query<{ id: string; icd: string; organization_identifier: string }>(
        `SELECT id, icd, organization_identifier FROM participants WHERE NOT identifier_checked
          LIMIT ${CHECK_BATCH} FOR UPDATE SKIP LOCKED`,
      );
      if (rows.length === 0) return 0;
      await tx.query(
        `UPDATE participants pa SET identifier_checked = true, identifier_fault = v.fault
           FROM unnest($1::uuid[], $2::text[]) AS v(id, fault) WHERE pa.id = v.id`,
        [rows.map((row) => row.id), rows.map((row) => valueFaultOf(row.icd, row.organization_identifier) ?? null)],
      );
      return rows.length;
    });
    if (count === 0) break;
    checked += count;
  }
  return checked;
}

/** The live participants with a faulty identifier within the caller's scope, with their fault. */
function faulty(scope: Scope): Conditions {
  const conditions = new Conditions().where('pa.identifier_fault IS NOT NULL').where(participantIsLive('pa'));
  if (scope !== null) conditions.where(`pa.service_provider_id = ${conditions.param(scope)}`);
  return conditions;
}

/** A page of them, and their total. */
export function findIdentifierFaults(db: Queryable, scope: Scope, page: PageRequest) {
  return selectPage<ParticipantWithFault>(db, {
    select: `${participantColumns(false)}, pa.identifier_fault AS "identifierFault"`,
    from: 'participants pa',
    key: 'pa.id',
    conditions: faulty(scope),
    page,
  });
}

/** The SQL rows counted as the status's `identifierFaults` (every provider's). */
export const IDENTIFIER_FAULT_ROWS = `participants pa WHERE pa.identifier_fault IS NOT NULL AND ${participantIsLive('pa')}`;
