import { formatQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import { batchableRead } from '../db/batched-reads.js';
import type { Queryable } from '../db/database.js';
import { participantIsLive, processIdsOf } from '../participants/repository.js';
import type { Organization } from '../participants/identifiers.js';
import type { PublishedEndpoint, PublishedProcess } from './xml.js';

// An organization's live participants, each process they receive (visible ones only, with its visible document
// types) and the endpoints of the access point of the participant's service provider. An endpoint without a
// certificate cannot be published (the SMP schema requires one) and is left out.
const PUBLISHED = `
  participants pa
  JOIN participant_processes pp ON pp.participant_id = pa.id
  JOIN processes pr ON pr.id = pp.process_id AND pr.visible
  JOIN process_document_types pdt ON pdt.process_id = pr.id
  JOIN document_types dt ON dt.id = pdt.document_type_id AND dt.visible
  JOIN service_providers sp ON sp.id = pa.service_provider_id
  JOIN access_points ap ON ap.id = sp.access_point_id
  JOIN access_point_providers app ON app.id = ap.provider_id
  JOIN endpoints e ON e.access_point_id = ap.id AND e.certificate IS NOT NULL
  JOIN transport_profiles tp ON tp.id = e.transport_profile_id`;
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

const ORGANIZATION = batchableRead(`SELECT ${ORGANIZATION_COLUMNS} FROM participants pa WHERE ${OF_ORGANIZATION} HAVING count(*) > 0`, ['text', 'text']);

/** Whether the organization has a live participant, and when the first of its participants' delete dates falls. */
export function findOrganization(db: Queryable, organization: Organization): Promise<FoundOrganization | undefined> {
  return db.readOne<FoundOrganization>(ORGANIZATION, [organization.icd, organization.organizationIdentifier]);
}

/** A live participant of an organization, as its service group needs it: its provider and its processes' ids. */
export interface Receiver {
  provider: string;
  processes: string[];
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
 * indexed statement: what the processes, providers and access points hold is catalogue data (service-group.ts).
 */
export function findServiceGroup(db: Queryable, organization: Organization) {
  return db.readOne<FoundOrganization & { receivers: Receiver[] }>(SERVICE_GROUP, [organization.icd, organization.organizationIdentifier]);
}

interface EndpointRow extends Omit<PublishedEndpoint, 'activationDate' | 'expirationDate'> {
  processScheme: string;
  processValue: string;
  activationDate: Date | null;
  expirationDate: Date | null;
}

/** xs:dateTime in UTC, to the second. */
const dateTime = (date: Date | null) => (date ? `${date.toISOString().slice(0, 19)}Z` : null);

/** The processes of the organization that carry the document type, each with its endpoints. */
export async function publishedProcesses(db: Queryable, organization: Organization, documentType: QualifiedIdentifier): Promise<PublishedProcess[]> {
  const rows = await db.query<EndpointRow>(
    `SELECT pr.scheme AS "processScheme", pr.value AS "processValue", tp.value AS "transportProfile", e.url,
            e.certificate, coalesce(e.service_description, ap.title) AS "serviceDescription",
            coalesce(e.technical_contact_url, 'mailto:' || app.contact_email, '') AS "technicalContactUrl",
            e.require_business_level_signature AS "requireBusinessLevelSignature",
            e.activation_date AS "activationDate", e.expiration_date AS "expirationDate"
       FROM ${PUBLISHED}
      WHERE ${OF_ORGANIZATION} AND dt.scheme = $3 AND dt.value = $4
      ORDER BY pr.scheme, pr.value, e.position`,
    [organization.icd, organization.organizationIdentifier, documentType.scheme, documentType.value],
  );
  const processes = new Map<string, PublishedProcess>();
  for (const { processScheme, processValue, activationDate, expirationDate, ...endpoint } of rows) {
    const identifier = { scheme: processScheme, value: processValue };
    const key = formatQualifiedIdentifier(identifier);
    let process = processes.get(key);
    if (!process) {
      process = { process: identifier, endpoints: [] };
      processes.set(key, process);
    }
    process.endpoints.push({ ...endpoint, activationDate: dateTime(activationDate), expirationDate: dateTime(expirationDate) });
  }
  return [...processes.values()];
}
