import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf, Role } from '../http/auth.js';
import { pageOf, pageRequest } from '../core/paging.js';
import { ForbiddenError } from '../core/errors.js';
import { findFlagged, FLAG_SORTABLE, FLAG_TIE_BREAKER } from './checks.js';
import { FlaggedParticipantPage, FlagQuery } from './schemas.js';

const OBJECT_NAME = 'registerFlagFilter';

/**
 * The participants whose organization Enhetsregisteret has deleted, does not know, or has not confirmed
 * (`/rest/api/national-register/flags`): a service provider sees its own, the ADMIN and the authority every one.
 */
const nationalRegisterRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/flags',
    {
      schema: {
        summary:
          'Find the participants whose organization Enhetsregisteret has deleted, does not know, or has not confirmed yet',
        querystring: FlagQuery,
        response: { 200: FlaggedParticipantPage },
      },
      config: {
        access: [Role.serviceProvider, Role.admin, Role.registryAuthority],
        mediaTypes: ['national-register-flags.find'],
        objectName: OBJECT_NAME,
      },
    },
    async (request) => {
      const page = pageRequest(request.query, FLAG_SORTABLE, FLAG_TIE_BREAKER, OBJECT_NAME);
      const caller = callerOf(request);
      if (caller.role === Role.serviceProvider && caller.serviceProviderId === null) throw new ForbiddenError();
      const scope = caller.role === Role.serviceProvider ? caller.serviceProviderId : null;
      const { total, rows } = await findFlagged(app.db, page, scope, request.query.state);
      return pageOf(rows, total, page);
    },
  );
};

export default nationalRegisterRoutes;
