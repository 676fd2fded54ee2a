import type { FastifyInstance } from 'fastify';
import { pageOf, type PageRequest } from '../core/paging.js';
import type { CatalogueKind } from '../db/catalogue-table.js';

/** The route's serializer of its 200 answer: the JSON Fastify would send for `body`. */
export type Serialize = (body: unknown) => string;

/**
 * The reads of a managed resource that the catalogue cache answers, serialized once per version of the rows: every
 * page of its find, unless `unfiltered` says the query filters (then the database answers), and its get. An id the
 * cache lacks goes to the database (a row newer than the cache, or the 404), so unknown ids cannot force loads.
 */
export function catalogueReads<Kind extends CatalogueKind, Query = unknown>(
  kind: Kind,
  unfiltered: (query: Query) => boolean = () => true,
) {
  return {
    find: async (app: FastifyInstance, page: PageRequest, query: Query, serialize: Serialize) => {
      if (!unfiltered(query)) return undefined;
      const held = await app.catalogue.rows(kind);
      return held.answer(`page ${page.offset} ${page.size} ${page.orderBy}`, () => {
        const { total, rows } = held.page(page);
        return serialize(pageOf(rows, total, page));
      });
    },
    get: async (app: FastifyInstance, id: string, serialize: Serialize) => {
      const held = await app.catalogue.rows(kind);
      const row = held.row(id.toLowerCase());
      return row && held.answer(`item ${row.identifier}`, () => serialize(row));
    },
  };
}
