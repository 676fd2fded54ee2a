import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { synchronousHook } from './synchronous-hook.js';

/** The header constants the specification shows on every response, errors included. */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-xss-protection': '0',
  'cache-control': 'no-cache, no-store, max-age=0, must-revalidate',
  pragma: 'no-cache',
  expires: '0',
  'strict-transport-security': 'max-age=31536000 ; includeSubDomains',
  'x-frame-options': 'DENY',
} as const;

async function securityHeaders(fastify: FastifyInstance) {
  fastify.addHook(
    'onRequest',
    synchronousHook((_request, reply) => {
      reply.headers(SECURITY_HEADERS);
    }),
  );
}

export default fp(securityHeaders, { name: 'security-headers' });
