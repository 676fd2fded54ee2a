import type { Sortable } from '../core/paging.js';
import type { ChangeResource } from './change-log.js';
import type { ResourceTable } from './sql.js';

/** The kinds of rows the catalogue cache holds whole. */
export type CatalogueKind =
  | 'process'
  | 'document-type'
  | 'capability'
  | 'transport-profile'
  | 'access-point'
  | 'access-point-provider'
  | 'service-provider';

/**
 * A resource of the catalogue, declared once next to its SQL: its routes (managedResourceRoutes) read and sort its
 * pages by it, and the catalogue cache holds its rows by it.
 */
export interface CatalogueTable<Kind extends CatalogueKind = CatalogueKind> extends ResourceTable {
  /** Its kind in the change log and in the catalogue cache. */
  kind: Kind;
  /** The properties its pages sort by; `id` breaks ties (the cache holds its rows in `id` order). */
  sortable: Sortable;
  /** The change-log kinds its responses show: its own and every one they embed. A change of any drops its rows. */
  builtFrom: readonly ChangeResource[];
}
