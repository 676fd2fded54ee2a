import { onForeignKeyViolation, type Queryable } from '../db/database.js';
import { deletedMeanwhile, deleteUnused, insertedId, lockRow, optionalSummaryJson } from '../db/rows.js';
import type { CatalogueTable } from '../db/catalogue-table.js';
import { participantIsLive } from '../participants/repository.js';
import { expireParticipants } from '../participants/writes.js';

/** Service providers, as their routes read them and the catalogue cache holds them: they show their access point's title. */
export const SERVICE_PROVIDER_TABLE: CatalogueTable<'service-provider'> = {
  kind: 'service-provider',
  select: `sp.id AS identifier, sp.title, ${optionalSummaryJson('ap')} AS "accessPoint"`,
  from: 'service_providers sp LEFT JOIN access_points ap ON ap.id = sp.access_point_id',
  id: 'sp.id',
  sortable: {
    identifier: 'sp.id',
    title: 'sp.title',
    'accessPoint.identifier': 'ap.id',
    'accessPoint.title': 'ap.title',
  },
  builtFrom: ['service-provider', 'access-point'],
};

export interface ServiceProviderRecord {
  title: string;
  accessPointId: string;
}

export async function insertServiceProvider(tx: Queryable, record: ServiceProviderRecord): Promise<string> {
  return insertedId(
    onForeignKeyViolation(
      tx.query<{ id: string }>('INSERT INTO service_providers (title, access_point_id) VALUES ($1, $2) RETURNING id', [
        record.title,
        record.accessPointId,
      ]),
      deletedMeanwhile('accessPoint'),
    ),
  );
}

export async function updateServiceProvider(tx: Queryable, id: string, record: ServiceProviderRecord): Promise<void> {
  await lockRow(tx, 'service_providers', id);
  await onForeignKeyViolation(
    tx.query('UPDATE service_providers SET title = $2, access_point_id = $3 WHERE id = $1', [
      id,
      record.title,
      record.accessPointId,
    ]),
    deletedMeanwhile('accessPoint'),
  );
}

/**
 * A provider with participants or users stays: its users are deleted (and its participants moved) first.
 * Participants past their delete date no longer count; they expire with the provider (rolled back on a 409).
 */
export async function deleteServiceProvider(tx: Queryable, id: string): Promise<void> {
  await expireParticipants(tx, { serviceProviderId: id });
  await deleteUnused(tx, 'service_providers', 'service provider', id, [
    {
      count: `SELECT count(*)::int FROM participants pa WHERE pa.service_provider_id = $1 AND ${participantIsLive('pa')}`,
      noun: 'participant(s)',
    },
    { count: 'SELECT count(*)::int FROM users WHERE service_provider_id = $1', noun: 'user(s)' },
  ]);
}
