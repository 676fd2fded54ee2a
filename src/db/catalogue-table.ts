import type { Sortable } from '../core/paging.js';
import type { ChangeResource } from './change-log.js';
import type { ResourceTable } from './sql.js';

/** The kinds of rows the catalogue cache holds whole. */
export type CatalogueKind = 'process' | 'document-type' | 'capability' | 'transport-profile' | 'access-point'
  | 'access-point-provider' | 'service-provider';

/** A resource the catalogue cache holds whole, declared next to its SQL. */
export interface CatalogueTable {
  /** Where its responses are read from; its rows are held in `table.id` order: its id is the tie-breaker of its pages. */
  table: ResourceTable;
  sortable: Sortable;
  /** The change-log kinds its responses show: its own and every one they embed. A change of any drops its rows. */
  builtFrom: readonly ChangeResource[];
}
