import basicAuth from '@fastify/basic-auth';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { ForbiddenError, UnauthorizedError } from '../core/errors.js';

export const Role = {
  serviceProvider: 'SERVICE_PROVIDER',
  accessPointProvider: 'ACCESS_POINT_PROVIDER',
  admin: 'ADMIN',
  registryAuthority: 'REGISTRY_AUTHORITY',
} as const;
export type Role = (typeof Role)[keyof typeof Role];
export const ROLES: readonly Role[] = Object.values(Role);
/** The roles as a schema: what a user is, and who is signed in, answer with (component `Role`). */
export const RoleSchema = Type.Unsafe<Role>({ type: 'string', enum: [...ROLES], title: 'Role' });

/** Who may call an operation: roles, and `ANONYMOUS` for callers without credentials. */
export type Access = Role | 'ANONYMOUS';
export const ANONYMOUS = 'ANONYMOUS';

/** Reading the catalogue (processes, document types): every role, and anonymous callers. */
export const EVERYONE: readonly Access[] = [...ROLES, ANONYMOUS];
/** Changing the catalogue. */
export const CATALOGUE_MANAGERS: readonly Access[] = [Role.admin, Role.registryAuthority];

/** The authenticated user behind a request. */
export interface Caller {
  userId: string;
  username: string;
  role: Role;
  serviceProviderId: string | null;
  accessPointProviderId: string | null;
}

/** A fixed list, or one that depends on the request (the two identifier kinds of participant paths). */
export type AccessRule = readonly Access[] | ((request: FastifyRequest) => readonly Access[]);

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessRule;
  }
  interface FastifyRequest {
    caller: Caller | null;
  }
}

export interface CredentialVerifier {
  /** The caller for these credentials, or null when they are wrong. */
  verify(username: string, password: string, request: FastifyRequest): Promise<Caller | null>;
}

/** A console session's token (`Authorization: Bearer <token>`), opened with Basic credentials. */
export interface SessionVerifier {
  /** The caller of a live session, or null when the token is unknown or its session has ended. */
  verify(token: string): Promise<Caller | null>;
}

/** The token of a Bearer authorization header, else undefined. */
export const bearerTokenOf = (request: FastifyRequest) =>
  /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')?.[1];

export const API_PREFIX = '/rest/api/';

/**
 * HTTP Basic authentication (or a console session's token) and the role check of each operation, run before
 * anything else of the request. Every API route must declare its `access`; a route without one fails at start-up.
 */
async function authentication(
  fastify: FastifyInstance,
  options: { credentials: CredentialVerifier; sessions?: SessionVerifier },
) {
  fastify.decorateRequest('caller', null);
  await fastify.register(basicAuth, {
    validate: async (username, password, request) => {
      const caller = await options.credentials.verify(username, password, request);
      if (!caller) throw new UnauthorizedError('Bad credentials');
      request.caller = caller;
    },
  });

  fastify.addHook('onRoute', (route) => {
    if (route.url.startsWith(API_PREFIX) && !route.config?.access) {
      throw new Error(`${String(route.method)} ${route.url} declares no access rule`);
    }
  });

  // A callback hook: an anonymous read passes without a promise; credentials are checked in basic-auth's callback.
  fastify.addHook('onRequest', (request, reply, done) => {
    const rule = request.routeOptions.config.access;
    if (!rule) return done();
    const allowed = typeof rule === 'function' ? rule(request) : rule;
    if (request.headers.authorization === undefined) {
      return done(allowed.includes(ANONYMOUS) ? undefined : new UnauthorizedError());
    }
    const token = options.sessions && bearerTokenOf(request);
    if (token !== undefined && options.sessions) {
      options.sessions.verify(token).then((caller) => {
        request.caller = caller;
        done(
          !caller
            ? new UnauthorizedError('The session has ended: sign in again')
            : allowed.includes(caller.role)
              ? undefined
              : new ForbiddenError(),
        );
      }, done);
      return;
    }
    fastify.basicAuth(request, reply, (error?: Error) => {
      if (error) return done(error);
      done(request.caller && allowed.includes(request.caller.role) ? undefined : new ForbiddenError());
    });
  });
}

export default fp(authentication, { name: 'authentication' });

/** The caller of an operation that admits no anonymous access; the hook above guarantees one. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new UnauthorizedError();
  return request.caller;
}
