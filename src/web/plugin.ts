import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm run build` puts the console's bundle, next to the compiled service (dist/console). */
const DEFAULT_CONSOLE_ROOT = fileURLToPath(new URL('../console/', import.meta.url));

/** The pages' policy: only files of this origin, no inline script or style, no framing. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface ConsoleOptions {
  /** The built console (index.html and assets/); when it does not exist, nothing is served. */
  root?: string;
}

/**
 * The browser console at `/` with its files under `/assets/`: one route per built file (no wildcard, so
 * root-level paths such as SMP lookups stay the API's). The API's own headers are untouched; the pages get a CSP.
 */
export default async function webConsole(app: FastifyInstance, options: ConsoleOptions) {
  const root = options.root ?? DEFAULT_CONSOLE_ROOT;
  if (!existsSync(join(root, 'index.html'))) {
    app.log.warn({ root }, 'no built web console (npm run build makes it): the console is not served');
    return;
  }
  app.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('referrer-policy', 'no-referrer');
  });
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: false,
    index: 'index.html',
    // Hashed file names change with their content: the assets may be cached for good, the page never.
    setHeaders: (response, path) => {
      if (path.includes(`${join(root, 'assets')}`))
        response.header('cache-control', 'public, max-age=31536000, immutable');
    },
  });
}
