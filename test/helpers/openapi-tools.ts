import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** A folder under the git-ignored `test-output/`, for what a test leaves to look at (description, screenshot). */
export function testOutputDir(name: string): string {
  const dir = join(PROJECT_ROOT, 'test-output', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface RegisteredRoute {
  method: string;
  url: string;
}

/**
 * Every route the router holds, read from `printRoutes` (the router's own listing, independent of the
 * description): each line of its tree is a path segment, followed by its methods when a route ends there.
 */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  const segments: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    segments.length = depth;
    segments.push(match[2] ?? '');
    for (const method of (match[3] ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean)) {
      routes.push({ method, url: segments.join('') });
    }
  }
  return routes;
}
