import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf, EVERYONE, Role } from '../http/auth.js';
import { ForbiddenError } from '../core/errors.js';
import { Nullable } from '../core/schemas.js';
import { comingRemovals, REMOVALS_DEFAULT_DAYS, REMOVALS_MAX_DAYS, REMOVALS_MAX_LIMIT } from './removals.js';
import { catalogueSources } from './repository.js';

const CatalogueSourceList = Type.Array(
  Type.Object(
    {
      list: Type.Union(
        [
          Type.Literal('processes'),
          Type.Literal('document-types'),
          Type.Literal('transport-profiles'),
          Type.Literal('participant-identifier-schemes'),
          Type.Literal('starter'),
        ],
        {
          description:
            'the code list; `starter`: the small catalogue a first start sets up when no code list was loaded',
        },
      ),
      version: Type.String({ description: 'the release of that list last loaded (`registry load-catalogue`)' }),
      loadedAt: Type.String({ format: 'date-time', description: 'when it was loaded' }),
    },
    { title: 'CatalogueSource' },
  ),
  { title: 'CatalogueSourceList' },
);

const Named = (title: string) =>
  Type.Object({ identifier: Type.String({ format: 'uuid' }), qualifiedIdentifier: Type.String() }, { title });

const ComingRemovalList = Type.Object(
  {
    counts: Type.Array(
      Type.Object(
        {
          removedFrom: Type.String({ format: 'date-time', description: 'the removal instant' }),
          participants: Type.Integer({ description: 'participants that lose a process or document type then' }),
          entries: Type.Integer({
            description:
              'what they lose then: one per participant and process, or participant, process and document type',
          }),
        },
        { title: 'RemovalCount' },
      ),
      { description: 'per removal instant, in time order: every coming removal counted, beyond `limit` too' },
    ),
    removals: Type.Array(
      Type.Object(
        {
          removedFrom: Type.String({ format: 'date-time' }),
          participant: Named('RemovalParticipant'),
          serviceProvider: Type.Object(
            { identifier: Type.String({ format: 'uuid' }), title: Type.String() },
            { title: 'RemovalServiceProvider' },
          ),
          process: Named('RemovalProcess'),
          documentType: Nullable(Named('RemovalDocumentType')),
        },
        {
          title: 'ComingRemoval',
          description:
            'the participant loses the process (`documentType` null) or that document type of it at `removedFrom`',
        },
      ),
      { description: 'the first `limit`, by instant, participant, process and document type' },
    ),
    total: Type.Integer({ description: 'all coming removals, of which `removals` lists the first `limit`' }),
  },
  { title: 'ComingRemovalList' },
);

const IdentifierSchemeSummaryList = Type.Array(
  Type.Object(
    {
      icd: Type.String({ description: 'four digits, such as 0192' }),
      schemeId: Nullable(Type.String({ description: "the list's scheme id, such as NO:ORG" })),
      schemeName: Type.String({ description: "the scheme's name as the list gives it" }),
      country: Nullable(Type.String()),
      issuingAgency: Nullable(
        Type.String({ description: 'who issues the identifiers, such as The Brønnøysund Register Centre' }),
      ),
      state: Type.Enum(['active', 'deprecated', 'removed']),
      removalDate: Nullable(
        Type.String({ format: 'date', description: 'from the UTC start of this day no new participant takes the ICD' }),
      ),
    },
    { title: 'IdentifierSchemeSummary' },
  ),
  {
    title: 'IdentifierSchemeSummaryList',
    description:
      'every ICD of the loaded Participant Identifier Schemes code list, by ICD (bounded by the list: ICDs are four digits); empty before one is loaded',
  },
);

const RemovalQuery = Type.Object({
  days: Type.Integer({
    minimum: 1,
    maximum: REMOVALS_MAX_DAYS,
    default: REMOVALS_DEFAULT_DAYS,
    description: 'how many days ahead',
  }),
  limit: Type.Integer({
    minimum: 0,
    maximum: REMOVALS_MAX_LIMIT,
    default: 100,
    description: 'how many removals to list',
  }),
});

/** Which code-list release the catalogue follows: as public as the catalogue itself. */
const catalogueRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/sources',
    {
      schema: {
        summary: 'addition: the code-list releases the catalogue was loaded from, one per list (empty before any load)',
        response: { 200: CatalogueSourceList },
      },
      config: { access: EVERYONE, mediaTypes: ['catalogue.sources'], reads: 'standby' },
    },
    async () => catalogueSources(app.db),
  );

  app.get(
    '/identifier-schemes',
    {
      schema: {
        summary:
          'addition: the ICDs of the loaded Participant Identifier Schemes code list, each with its name (what 0192 is)',
        response: { 200: IdentifierSchemeSummaryList },
      },
      config: { access: EVERYONE, mediaTypes: ['catalogue.identifier-schemes'], reads: 'standby' },
    },
    async () =>
      (await app.catalogue.identifierSchemes())
        .all()
        .map(({ icd, schemeId, schemeName, country, issuingAgency, state, removalDate }) => ({
          icd,
          schemeId,
          schemeName,
          country,
          issuingAgency,
          state,
          removalDate,
        })),
  );

  app.get(
    '/removals',
    {
      schema: {
        summary:
          'addition: what the live participants lose at the coming removal instants of processes and document types (code-list removal dates)',
        description:
          'From its removal instant a process or document type is no longer published (SMP, Directory, public lookup); the participants ' +
          'keep it on their record, with its `removedFrom`. A service provider sees its own participants; the authority and admins all, with the ' +
          'counts per instant.',
        querystring: RemovalQuery,
        response: { 200: ComingRemovalList },
      },
      config: {
        access: [Role.serviceProvider, Role.admin, Role.registryAuthority],
        mediaTypes: ['catalogue.removals'],
        reads: 'standby',
      },
    },
    async (request) => {
      const caller = callerOf(request);
      // A service provider's user without a provider sees nothing rather than everything.
      if (caller.role === Role.serviceProvider && caller.serviceProviderId === null) throw new ForbiddenError();
      const scope = caller.role === Role.serviceProvider ? caller.serviceProviderId : null;
      return comingRemovals(app.db, scope, request.query.days, request.query.limit);
    },
  );
};

export default catalogueRoutes;
