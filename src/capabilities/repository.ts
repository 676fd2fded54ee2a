import type { Queryable } from '../db/database.js';
import { deleteUnused, insertedId, lockRow } from '../db/rows.js';
import type { CatalogueTable } from '../db/catalogue-table.js';
import type { CapabilityForm } from './schemas.js';

/** Capabilities, as their routes read them and the catalogue cache holds them. */
export const CAPABILITY_TABLE: CatalogueTable<'capability'> = {
  kind: 'capability',
  select: 'c.id AS identifier, c.title',
  from: 'capabilities c',
  id: 'c.id',
  sortable: { identifier: 'c.id', title: 'c.title' },
  builtFrom: ['capability'],
};

export async function insertCapability(tx: Queryable, form: CapabilityForm): Promise<string> {
  return insertedId(
    tx.query<{ id: string }>('INSERT INTO capabilities (title) VALUES ($1) RETURNING id', [form.title]),
  );
}

export async function updateCapability(tx: Queryable, id: string, form: CapabilityForm): Promise<void> {
  await lockRow(tx, 'capabilities', id);
  await tx.query('UPDATE capabilities SET title = $2 WHERE id = $1', [id, form.title]);
}

export function deleteCapability(tx: Queryable, id: string): Promise<void> {
  return deleteUnused(tx, 'capabilities', 'capability', id, [
    { count: 'SELECT count(*)::int FROM process_capabilities WHERE capability_id = $1', noun: 'process(es)' },
  ]);
}
