import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ForbiddenError, UnauthorizedError } from '../core/errors.js';
import { bearerTokenOf, callerOf, ROLES } from '../http/auth.js';
import { ErrorBody } from '../core/schemas.js';
import { CurrentSession, OpenedSession } from './schemas.js';
import { closeSession, openSession, sessionExpiry } from './sessions.js';

/**
 * An addition for the web console: a session opened with Basic credentials, whose token the console keeps in its
 * tab's sessionStorage instead of the password, so that a reload keeps the sign-in (docs/design/sign-in.md).
 */
const sessions: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/',
    {
      // 403: asked with a session's token rather than the username and password.
      schema: { response: { 201: OpenedSession, 403: ErrorBody } },
      config: { access: ROLES, mediaTypes: ['sessions.open'] },
    },
    async (request, reply) => {
      // A session cannot open the next: it ends when it ends, whatever it does meanwhile.
      if (bearerTokenOf(request) !== undefined)
        throw new ForbiddenError('A session is opened with the username and password');
      const caller = callerOf(request);
      const opened = await openSession(app.db, caller.userId, app.credentials.verifiedWith(caller));
      // Deleted, or given a new password, since its credentials were checked: they are no longer right.
      if (!opened) throw new UnauthorizedError('Bad credentials');
      return reply.status(201).send({ username: caller.username, role: caller.role, ...opened });
    },
  );

  app.get(
    '/current',
    {
      schema: { response: { 200: CurrentSession } },
      config: { access: ROLES, mediaTypes: ['sessions.current'] },
    },
    async (request) => {
      const { username, role } = callerOf(request);
      const token = bearerTokenOf(request);
      return { username, role, expiresAt: token === undefined ? null : ((await sessionExpiry(app.db, token)) ?? null) };
    },
  );

  app.delete(
    '/current',
    {
      config: { access: ROLES, mediaTypes: ['sessions.close'] },
    },
    async (request, reply) => {
      const token = bearerTokenOf(request);
      if (token !== undefined) await closeSession(app.db, token);
      return reply.status(204).send();
    },
  );
};

export default sessions;
