import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `standby`: the route only reads, and may read from a hot standby of the primary (DATABASE_READ_URLS): the
     * anonymous reads the network makes and the authority's long ones. Every other route reads the primary.
     */
    reads?: 'standby';
  }
}

export interface ReadRoutingOptions {
  /** Runs the rest of a standby route's request (`next`) with the reads chosen for it (read-your-writes, the primary's state). */
  runReads(request: FastifyRequest, next: () => void): void;
}

/** The routes that declare `reads: 'standby'` run their handler within the reads `runReads` chooses for the request. */
async function readRouting(app: FastifyInstance, options: ReadRoutingOptions) {
  // After authentication (onRequest): the caller decides whether its own writes must be seen.
  app.addHook('preHandler', (request, _reply, done) => {
    if (request.routeOptions.config.reads !== 'standby') return done();
    options.runReads(request, () => done());
  });
}

export default fp(readRouting, { name: 'read-routing' });
