import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EVERYONE } from '../http/auth.js';
import { catalogueSources } from './repository.js';

const CatalogueSourceList = Type.Array(Type.Object({
  list: Type.Union([Type.Literal('processes'), Type.Literal('document-types'), Type.Literal('transport-profiles'),
    Type.Literal('participant-identifier-schemes'), Type.Literal('starter')], {
    description: 'the code list; `starter`: the small catalogue a first start sets up when no code list was loaded',
  }),
  version: Type.String({ description: 'the release of that list last loaded (`registry load-catalogue`)' }),
  loadedAt: Type.String({ format: 'date-time', description: 'when it was loaded' }),
}, { title: 'CatalogueSource' }), { title: 'CatalogueSourceList' });

/** Which code-list release the catalogue follows: as public as the catalogue itself. */
const catalogueRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/sources', {
    schema: {
      summary: 'addition: the code-list releases the catalogue was loaded from, one per list (empty before any load)',
      response: { 200: CatalogueSourceList },
    },
    config: { access: EVERYONE, mediaTypes: ['catalogue.sources'], reads: 'standby' },
  }, async () => catalogueSources(app.db));
};

export default catalogueRoutes;
