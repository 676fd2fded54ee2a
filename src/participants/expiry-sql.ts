/** The SQL of expiry: which participants are due, and their removal (writes.ts logs it). */
import type { Queryable } from '../db/database.js';
import { Conditions } from '../db/sql.js';
import type { Organization } from './identifiers.js';
import { participantColumns, TODAY } from './repository.js';
import type { Participant } from './schemas.js';

/** Which participants are due to expire: those whose delete date is `today` (default: today in UTC) or earlier. */
export interface ExpiryDue {
  today?: string;
  /** Only this organization's (a write clearing the way for a new registration). */
  organization?: Organization;
  /** Only these organizations' (a bulk import clearing the way for its batch). */
  organizations?: readonly Organization[];
  /** Only this service provider's (a provider being deleted). */
  serviceProviderId?: string;
  limit?: number;
}

/**
 * Removes participants whose delete date has come, inside the caller's transaction, and returns them as they were.
 * They are locked first (waiting, not skipping): of two transactions expiring the same participant, the second
 * finds it gone once the first commits, so each is removed, and logged by the caller, exactly once.
 */
export async function removeExpired(tx: Queryable, due: ExpiryDue): Promise<Participant[]> {
  const conditions = new Conditions();
  conditions.where(`pa.delete_date <= ${due.today === undefined ? TODAY : `${conditions.param(due.today)}::date`}`);
  if (due.organization) {
    conditions
      .where(`pa.icd = ${conditions.param(due.organization.icd)}`)
      .where(`pa.organization_identifier = ${conditions.param(due.organization.organizationIdentifier)}`);
  }
  if (due.organizations) {
    conditions.where(
      `(pa.icd, pa.organization_identifier) IN (SELECT * FROM unnest(${conditions.param(due.organizations.map((o) => o.icd))}::text[], ` +
        `${conditions.param(due.organizations.map((o) => o.organizationIdentifier))}::text[]))`,
    );
  }
  if (due.serviceProviderId)
    conditions.where(`pa.service_provider_id = ${conditions.param(due.serviceProviderId)}::uuid`);
  const locked = await tx.query<{ id: string }>(
    `SELECT pa.id FROM participants pa ${conditions.clause} ORDER BY pa.id LIMIT ${conditions.param(due.limit ?? null)} FOR UPDATE`,
    conditions.params,
  );
  if (locked.length === 0) return [];
  const ids = locked.map((row) => row.id);
  const expired = await tx.query<Participant>(
    `SELECT ${participantColumns(true)} FROM participants pa WHERE pa.id = ANY($1::uuid[]) ORDER BY pa.id`,
    [ids],
  );
  await tx.query('DELETE FROM participants WHERE id = ANY($1::uuid[])', [ids]);
  return expired;
}
