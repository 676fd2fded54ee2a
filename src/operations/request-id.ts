import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { synchronousHook } from '../http/synchronous-hook.js';

const REQUEST_ID_HEADER = 'x-request-id';

/** Only ids that cannot forge log lines or headers are taken over from the caller. */
const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `x-request-id` when it is a sane token, else a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && ACCEPTABLE_ID.test(given) ? given : randomUUID();
}

/** Answers every request, errors included, with the id its log lines carry. */
async function requestIdHeader(fastify: FastifyInstance) {
  fastify.addHook(
    'onRequest',
    synchronousHook((request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
    }),
  );
}

export default fp(requestIdHeader, { name: 'request-id' });
