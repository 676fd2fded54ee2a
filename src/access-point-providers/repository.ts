import type { Queryable } from '../db/database.js';
import type { ReferenceTarget } from '../db/references.js';
import { deleteUnused, insertedId, lockRow } from '../db/rows.js';
import type { CatalogueTable } from '../db/catalogue-table.js';
import type { AccessPointProviderForm } from './schemas.js';

export const ACCESS_POINT_PROVIDER_REFERENCE: ReferenceTarget = {
  table: 'access_point_providers',
  noun: 'access point provider',
  typeName: 'AccessPointProviderIdentifiable',
};

/** The contact of the access point provider `alias`, null when it has none. */
const contactJson = (alias: string) => `CASE WHEN ${alias}.contact_name IS NULL THEN NULL ELSE
  json_build_object('name', ${alias}.contact_name, 'email', ${alias}.contact_email, 'phoneNumber', ${alias}.contact_phone) END`;

/** An access point provider as JSON; access points show their provider in this shape. */
export const accessPointProviderJson = (alias: string) =>
  `json_build_object('identifier', ${alias}.id, 'title', ${alias}.title, 'contact', ${contactJson(alias)})`;

/** Access point providers, as their routes read them and the catalogue cache holds them. */
export const ACCESS_POINT_PROVIDER_TABLE: CatalogueTable<'access-point-provider'> = {
  kind: 'access-point-provider',
  select: `app.id AS identifier, app.title, ${contactJson('app')} AS contact`,
  from: 'access_point_providers app',
  id: 'app.id',
  sortable: { identifier: 'app.id', title: 'app.title', 'contact.name': 'app.contact_name' },
  builtFrom: ['access-point-provider'],
};

const values = (form: AccessPointProviderForm) => [
  form.title,
  form.contact.name,
  form.contact.email ?? null,
  form.contact.phoneNumber ?? null,
];

export async function insertAccessPointProvider(tx: Queryable, form: AccessPointProviderForm): Promise<string> {
  return insertedId(
    tx.query<{ id: string }>(
      `INSERT INTO access_point_providers (title, contact_name, contact_email, contact_phone) VALUES ($1, $2, $3, $4) RETURNING id`,
      values(form),
    ),
  );
}

export async function updateAccessPointProvider(
  tx: Queryable,
  id: string,
  form: AccessPointProviderForm,
): Promise<void> {
  await lockRow(tx, 'access_point_providers', id);
  await tx.query(
    'UPDATE access_point_providers SET title = $2, contact_name = $3, contact_email = $4, contact_phone = $5 WHERE id = $1',
    [id, ...values(form)],
  );
}

export function deleteAccessPointProvider(tx: Queryable, id: string): Promise<void> {
  return deleteUnused(tx, 'access_point_providers', 'access point provider', id, [
    { count: 'SELECT count(*)::int FROM access_points WHERE provider_id = $1', noun: 'access point(s)' },
    { count: 'SELECT count(*)::int FROM users WHERE access_point_provider_id = $1', noun: 'user(s)' },
  ]);
}
