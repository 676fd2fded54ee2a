import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { TooManyRequestsError } from '../core/errors.js';
import { Slots } from '../core/concurrency.js';
import { declaresBody } from './early-answers/server.js';
import { synchronousHook } from './synchronous-hook.js';

interface InFlightLimitOptions {
  /** Requests one client address may have in flight at once; beyond it each is answered 429 at once. */
  maxPerAddress: number;
}

/** A slot frees as requests end; a client told to wait should not hammer meanwhile, nor wait long. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Caps the requests in flight per client address (`request.ip`: the proxy's client address where one is trusted), so
 * that one client holding many slow requests leaves the service to the others. Counted from the moment the headers
 * have arrived (before the body is read) until the response ends or the connection closes.
 */
async function inFlightLimit(fastify: FastifyInstance, options: InFlightLimitOptions) {
  const inFlight = new Slots(options.maxPerAddress);
  fastify.addHook(
    'onRequest',
    synchronousHook((request, reply) => {
      const address = request.ip;
      if (!inFlight.take(address)) {
        throw new TooManyRequestsError(
          RETRY_AFTER_SECONDS,
          'Too many requests in flight from this address; try again later',
          'requests_in_flight_refused',
        );
      }
      reply.raw.once('close', () => inFlight.release(address));
    }),
  );
  // An answer given before the body has arrived (401, 403, 413, 415, 429, ...) closes the connection: otherwise Node would
  // read the rest to keep the connection, and a client could hold it by trickling a large body it never finishes. (A
  // request without a body may not be marked complete yet while it is answered at once, in the call that parsed it.)
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (declaresBody(request.raw) && request.raw.complete === false) reply.header('connection', 'close');
    done(null, payload);
  });
}

export default fp(inFlightLimit, { name: 'in-flight-limit' });
