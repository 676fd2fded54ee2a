import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/actor.js';
import { callerOf, Role } from '../http/auth.js';
import { pageOf, pageRequest } from '../core/paging.js';
import { UuidParams } from '../core/schemas.js';
import { findLocks, liftLock, SIGN_IN_LOCK_SORTABLE, SIGN_IN_LOCK_TIE_BREAKER } from './sign-in-locks.js';
import { SignInLockPage, SignInLockQuery } from './schemas.js';

/**
 * The sign-in locks in force (`/rest/api/sign-in-locks`): read by the ADMIN and the authority, lifted by the ADMIN. The
 * list is the database's, the same from every instance; a lift is in the change log (the one act on locks it keeps),
 * and every instance's throttle drops the lock (and the pair's count of failures) when it hears it, this one before
 * it answers.
 */
const signInLocks: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      schema: {
        summary:
          'Find the sign-in locks in force: each username (or every one) refused from a client address after too many failed password checks, and until when',
        querystring: SignInLockQuery,
        response: { 200: SignInLockPage },
      },
      config: {
        access: [Role.admin, Role.registryAuthority],
        mediaTypes: ['sign-in-locks.find'],
        objectName: 'signInLockFilter',
      },
    },
    async (request) => {
      const page = pageRequest(request.query, SIGN_IN_LOCK_SORTABLE, SIGN_IN_LOCK_TIE_BREAKER, 'signInLockFilter');
      const { total, rows } = await findLocks(app.db, page, request.query.username);
      return pageOf(rows, total, page);
    },
  );

  app.delete(
    '/:identifier',
    {
      schema: {
        summary: 'Lift a sign-in lock: the username signs in again from that address at once, on every instance',
        params: UuidParams,
      },
      config: { access: [Role.admin], mediaTypes: ['sign-in-locks.delete'] },
    },
    async (request, reply) => {
      const lifted = await app.db.transaction((tx) => liftLock(tx, request.params.identifier, actorOf(request)));
      app.securityEvents.record(request, 'sign_in_lock_lifted', lifted.username, {
        lockedAddress: lifted.clientAddress,
        liftedBy: callerOf(request).username,
      });
      return reply.status(204).send();
    },
  );
};

export default signInLocks;
