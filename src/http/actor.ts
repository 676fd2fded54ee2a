import type { FastifyRequest } from 'fastify';
import type { Actor } from '../db/change-log.js';

/** The caller of a request (every write is authenticated), with the request id. */
export function actorOf(request: FastifyRequest): Actor {
  const caller = request.caller;
  return {
    origin: 'api',
    userId: caller?.userId ?? null,
    username: caller?.username ?? null,
    role: caller?.role ?? null,
    actingProviderId: caller?.serviceProviderId ?? caller?.accessPointProviderId ?? null,
    requestId: request.id,
  };
}
