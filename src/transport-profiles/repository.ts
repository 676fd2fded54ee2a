import { onUniqueViolation, type Queryable } from '../db/database.js';
import type { ReferenceTarget } from '../db/references.js';
import { deleteUnused, lockRow } from '../db/rows.js';
import { ConflictError } from '../core/errors.js';
import type { CatalogueTable } from '../db/catalogue-table.js';
import type { TransportProfileForm } from './schemas.js';

/** Endpoints name their transport profile by identifier or by its unique value. */
export const TRANSPORT_PROFILE_REFERENCE: ReferenceTarget = {
  table: 'transport_profiles',
  noun: 'transport profile',
  typeName: 'TransportProfileIdentifiable',
  alternateKey: 'value',
};

/** Transport profiles, as their routes read them and the catalogue cache holds them. */
export const TRANSPORT_PROFILE_TABLE: CatalogueTable<'transport-profile'> = {
  kind: 'transport-profile',
  select: 't.id AS identifier, t.value, t.title, t.restricted',
  from: 'transport_profiles t',
  id: 't.id',
  sortable: { identifier: 't.id', value: 't.value', title: 't.title', restricted: 't.restricted' },
  builtFrom: ['transport-profile'],
};

const duplicate = (form: TransportProfileForm) =>
  new ConflictError(`A transport profile with value '${form.value}' already exists`);

export async function insertTransportProfile(tx: Queryable, form: TransportProfileForm): Promise<string> {
  const [row] = await tx.query<{ id: string }>(
    `INSERT INTO transport_profiles (value, title, restricted) VALUES ($1, $2, $3)
     ON CONFLICT (value) DO NOTHING RETURNING id`,
    [form.value, form.title, form.restricted ?? false],
  );
  if (!row) throw duplicate(form);
  return row.id;
}

export async function updateTransportProfile(tx: Queryable, id: string, form: TransportProfileForm): Promise<void> {
  await lockRow(tx, 'transport_profiles', id);
  const [clash] = await tx.query('SELECT 1 FROM transport_profiles WHERE value = $1 AND id <> $2', [form.value, id]);
  if (clash) throw duplicate(form);
  await onUniqueViolation(
    tx.query('UPDATE transport_profiles SET value = $2, title = $3, restricted = $4 WHERE id = $1', [
      id,
      form.value,
      form.title,
      form.restricted ?? false,
    ]),
    () => duplicate(form),
  );
}

export function deleteTransportProfile(tx: Queryable, id: string): Promise<void> {
  return deleteUnused(tx, 'transport_profiles', 'transport profile', id, [
    { count: 'SELECT count(*)::int FROM endpoints WHERE transport_profile_id = $1', noun: 'endpoint(s)' },
  ]);
}
