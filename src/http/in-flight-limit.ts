import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { TooManyRequestsError } from '../core/errors.js';
import { Slots } from '../core/slots.js';
import { synchronousHook } from './synchronous-hook.js';

export interface InFlightLimitOptions {
  /** Requests one client address may have in flight at once; beyond it each is answered 429 at once. */
  maxPerAddress: number;
}

/** A slot frees as requests end; a client told to wait should not hammer meanwhile, nor wait long. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Caps the requests in flight per client address (`request.ip`: the proxy's client address where one is trusted), so
 * that one client holding many slow requests leaves the service to the others. Counted from the moment the headers
 * have arrived (before the body is read) until the response ends or the connection closes. The refusal closes its
 * connection: a body that follows it is not read.
 */
async function inFlightLimit(fastify: FastifyInstance, options: InFlightLimitOptions) {
  const inFlight = new Slots(options.maxPerAddress);
  fastify.addHook('onRequest', synchronousHook((request, reply) => {
    const address = request.ip;
    if (!inFlight.take(address)) {
      reply.header('connection', 'close');
      throw new TooManyRequestsError(RETRY_AFTER_SECONDS, 'Too many requests in flight from this address; try again later');
    }
    reply.raw.once('close', () => inFlight.release(address));
  }));
}

export default fp(inFlightLimit, { name: 'in-flight-limit' });
