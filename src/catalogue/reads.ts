import type { FastifyInstance } from 'fastify';
import type { PageRequest } from '../core/paging.js';
import type { CatalogueKind } from './cache.js';

/**
 * The reads of a managed resource that the catalogue cache answers: every page of its find, unless `unfiltered`
 * says the query filters (then the database answers), and its get. An id the cache lacks goes to the database
 * (a row newer than the cache, or the 404), so unknown ids cannot force loads.
 */
export function catalogueReads<Kind extends CatalogueKind, Query = unknown>(kind: Kind, unfiltered: (query: Query) => boolean = () => true) {
  return {
    find: async (app: FastifyInstance, page: PageRequest, query: Query) =>
      unfiltered(query) ? (await app.catalogue.rows(kind)).page(page) : undefined,
    get: async (app: FastifyInstance, id: string) => (await app.catalogue.rows(kind)).row(id.toLowerCase()),
  };
}
