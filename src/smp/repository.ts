import { batchableRead } from '../db/batched-reads.js';
import type { Queryable } from '../db/database.js';
import { participantIsLive, processIdsOf } from '../participants/repository.js';
import type { Organization } from '../participants/identifiers.js';
import type { OrganizationReceivers } from './receivers.js';

const OF_ORGANIZATION = `pa.icd = $1 AND pa.organization_identifier = $2 AND ${participantIsLive('pa')}`;

/** The organization's name, first registration and first coming delete date, over its live participants. */
const ORGANIZATION_COLUMNS = `
  (array_agg(pa.name ORDER BY pa.registration_date, pa.id))[1] AS name,
  to_char(min(pa.registration_date), 'YYYY-MM-DD') AS "registrationDate",
  to_char(min(pa.delete_date), 'YYYY-MM-DD') AS "nextDeleteDate"`;

interface FoundOrganization {
  name: string | null;
  registrationDate: string;
  nextDeleteDate: string | null;
}

const ORGANIZATION = batchableRead(
  `SELECT ${ORGANIZATION_COLUMNS} FROM participants pa WHERE ${OF_ORGANIZATION} HAVING count(*) > 0`,
  ['text', 'text'],
);

/** Whether the organization has a live participant, and when the first of its participants' delete dates falls. */
export function findOrganization(db: Queryable, organization: Organization): Promise<FoundOrganization | undefined> {
  return db.readOne<FoundOrganization>(ORGANIZATION, [organization.icd, organization.organizationIdentifier]);
}

const SERVICE_GROUP = batchableRead(
  `SELECT ${ORGANIZATION_COLUMNS},
          json_agg(json_build_object('provider', pa.service_provider_id,
            'processes', ${processIdsOf('pa.id')})) AS receivers
     FROM participants pa WHERE ${OF_ORGANIZATION} HAVING count(*) > 0`,
  ['text', 'text'],
);

/**
 * The organization as `findOrganization` finds it, with its live participants' providers and processes, in one
 * indexed statement: what the processes, providers and access points hold is catalogue data (service-group.ts,
 * service-metadata.ts).
 */
export function findServiceGroup(db: Queryable, organization: Organization) {
  return db.readOne<FoundOrganization & OrganizationReceivers>(SERVICE_GROUP, [
    organization.icd,
    organization.organizationIdentifier,
  ]);
}
