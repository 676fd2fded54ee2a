import type { Queryable } from '../db/database.js';
import { deleteUnused, lockRow } from '../db/rows.js';
import { resourceReads } from '../db/sql.js';
import type { CatalogueTable } from '../db/catalogue-table.js';
import type { Sortable } from '../core/paging.js';
import type { Capability, CapabilityForm } from './schemas.js';

const COLUMNS = 'c.id AS identifier, c.title';

export const CAPABILITY_SORTABLE: Sortable = { identifier: 'c.id', title: 'c.title' };
export const CAPABILITY_TIE_BREAKER = 'c.id';

/** Capabilities as the catalogue cache holds them. */
export const CAPABILITY_ROWS: CatalogueTable = {
  table: { select: COLUMNS, from: 'capabilities c', id: CAPABILITY_TIE_BREAKER },
  sortable: CAPABILITY_SORTABLE,
  builtFrom: ['capability'],
};

export const { findAll: findCapabilities, getById: getCapability } = resourceReads<Capability>(CAPABILITY_ROWS.table);

export async function insertCapability(tx: Queryable, form: CapabilityForm): Promise<string> {
  const [row] = await tx.query<{ id: string }>('INSERT INTO capabilities (title) VALUES ($1) RETURNING id', [form.title]);
  return (row as { id: string }).id;
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
