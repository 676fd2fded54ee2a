import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/**
 * A hook whose work is synchronous, registered as a callback hook: an async hook costs a promise and a microtask
 * per request, and every request runs several. What `work` throws fails the request, as in an async hook.
 */
export function synchronousHook(work: (request: FastifyRequest, reply: FastifyReply) => void) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    try {
      work(request, reply);
    } catch (error) {
      return done(error as Error);
    }
    // Outside the try: the next hook runs within done, and its errors are not this hook's.
    done();
  };
}
