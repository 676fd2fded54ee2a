import { onForeignKeyViolation, type Queryable } from '../db/database.js';
import type { ReferenceTarget } from '../db/references.js';
import { deletedMeanwhile, deleteUnused, insertedId, lockRow } from '../db/rows.js';
import { accessPointProviderJson } from '../access-point-providers/repository.js';
import type { CatalogueTable } from '../db/catalogue-table.js';

export const ACCESS_POINT_REFERENCE: ReferenceTarget = {
  table: 'access_points',
  noun: 'access point',
  typeName: 'AccessPointIdentifiable',
};

/** A timestamp as ISO 8601 in UTC with milliseconds, as JavaScript writes it, independent of the session time zone. */
function isoTimestamp(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

const COLUMNS = `
  ap.id AS identifier, ap.title, ${accessPointProviderJson('app')} AS provider,
  (SELECT coalesce(json_agg(jsonb_build_object('url', e.url, 'transportProfile', json_build_object(
            'title', t.title, 'value', t.value, 'certificateTypes', to_json(e.certificate_types)))
          || jsonb_strip_nulls(jsonb_build_object('certificate', e.certificate, 'serviceDescription', e.service_description,
               'technicalContactUrl', e.technical_contact_url,
               'requireBusinessLevelSignature', nullif(e.require_business_level_signature, false),
               'serviceActivationDate', ${isoTimestamp('e.activation_date')},
               'serviceExpirationDate', ${isoTimestamp('e.expiration_date')})) ORDER BY e.position), '[]')
     FROM endpoints e JOIN transport_profiles t ON t.id = e.transport_profile_id
    WHERE e.access_point_id = ap.id) AS endpoints`;

/**
 * Access points, as their routes read them and the catalogue cache holds them: they show their provider and their
 * endpoints' transport profiles.
 */
export const ACCESS_POINT_TABLE: CatalogueTable<'access-point'> = {
  kind: 'access-point',
  select: COLUMNS,
  from: 'access_points ap JOIN access_point_providers app ON app.id = ap.provider_id',
  id: 'ap.id',
  sortable: { identifier: 'ap.id', title: 'ap.title', 'provider.identifier': 'app.id', 'provider.title': 'app.title' },
  builtFrom: ['access-point', 'access-point-provider', 'transport-profile'],
};

interface EndpointRecord {
  url: string;
  transportProfileId: string;
  certificateTypes: string[];
  /** Base64 DER. */
  certificate?: string | null;
  serviceDescription?: string | null;
  technicalContactUrl?: string | null;
  /** Absent or null: false. */
  requireBusinessLevelSignature?: boolean | null;
  activationDate?: string | null;
  expirationDate?: string | null;
}

export interface AccessPointRecord {
  title: string;
  providerId: string;
  endpoints: EndpointRecord[];
}

/** Of these transport profiles, the restricted ones that the access point `ownId` does not use yet. */
export async function newlyUsedRestrictedProfiles(
  tx: Queryable,
  profileIds: readonly string[],
  ownId: string | null,
): Promise<Set<string>> {
  const rows = await tx.query<{ id: string }>(
    `SELECT t.id FROM transport_profiles t
      WHERE t.id = ANY($1::uuid[]) AND t.restricted
        AND NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.access_point_id = $2 AND e.transport_profile_id = t.id)`,
    [profileIds, ownId],
  );
  return new Set(rows.map((row) => row.id));
}

export async function insertAccessPoint(tx: Queryable, record: AccessPointRecord): Promise<string> {
  const id = await insertedId(
    onForeignKeyViolation(
      tx.query<{ id: string }>('INSERT INTO access_points (title, provider_id) VALUES ($1, $2) RETURNING id', [
        record.title,
        record.providerId,
      ]),
      deletedMeanwhile('provider'),
    ),
  );
  await insertEndpoints(tx, id, record.endpoints);
  return id;
}

export async function updateAccessPoint(tx: Queryable, id: string, record: AccessPointRecord): Promise<void> {
  await lockRow(tx, 'access_points', id);
  await onForeignKeyViolation(
    tx.query('UPDATE access_points SET title = $2, provider_id = $3 WHERE id = $1', [
      id,
      record.title,
      record.providerId,
    ]),
    deletedMeanwhile('provider'),
  );
  await tx.query('DELETE FROM endpoints WHERE access_point_id = $1', [id]);
  await insertEndpoints(tx, id, record.endpoints);
}

async function insertEndpoints(tx: Queryable, id: string, endpoints: readonly EndpointRecord[]): Promise<void> {
  if (endpoints.length === 0) return;
  await onForeignKeyViolation(
    tx.query(
      `INSERT INTO endpoints (access_point_id, position, url, transport_profile_id, certificate_types,
                            certificate, service_description, technical_contact_url, require_business_level_signature,
                            activation_date, expiration_date)
     SELECT $1, e.position, e.item->>'url', (e.item->>'transportProfileId')::uuid,
            ARRAY(SELECT jsonb_array_elements_text(e.item->'certificateTypes')),
            e.item->>'certificate', e.item->>'serviceDescription', e.item->>'technicalContactUrl',
            coalesce((e.item->>'requireBusinessLevelSignature')::boolean, false),
            (e.item->>'activationDate')::timestamptz, (e.item->>'expirationDate')::timestamptz
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(item, position)`,
      [id, JSON.stringify(endpoints)],
    ),
    deletedMeanwhile('endpoints'),
  );
}

export function deleteAccessPoint(tx: Queryable, id: string): Promise<void> {
  return deleteUnused(tx, 'access_points', 'access point', id, [
    { count: 'SELECT count(*)::int FROM service_providers WHERE access_point_id = $1', noun: 'service provider(s)' },
  ]);
}
