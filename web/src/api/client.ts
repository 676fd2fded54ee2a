import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema.js';
import { problemOf, unreachable } from './problem.js';

export { isProblem, placeMessages, problemOf, unreachable, waitWords, withoutField, type Problem } from './problem.js';
export type { ErrorBody, Role, Schemas } from './types.js';
export { warningOf } from './warning.js';

/** What this tab sends as Authorization: Basic credentials while it signs in, then its session's token (session.ts). */
let authorization: string | undefined;

/** HTTP Basic credentials as the Authorization header carries them. */
export const authorizationOf = (username: string, password: string) =>
  `Basic ${btoa(String.fromCodePoint(...new TextEncoder().encode(`${username}:${password}`)))}`;

export function useAuthorization(value: string): void {
  authorization = value;
}

export function forgetCredentials(): void {
  authorization = undefined;
}

const credentials: Middleware = {
  onRequest({ request }) {
    if (authorization) request.headers.set('authorization', authorization);
    return request;
  },
};

/** The browser's fetch, whose failure to get any answer ("TypeError: Failed to fetch") becomes the console's words for it. */
const reached = (request: Request) => globalThis.fetch(request).catch(() => Promise.reject(unreachable()));

/**
 * `credentials: 'omit'`: the browser neither prompts for a password on the API's 401 (its WWW-Authenticate
 * header) nor remembers one, so a sign-out is final; the Authorization header is the middleware's alone.
 */
export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'omit', fetch: reached });
api.use(credentials);

/** Data of a successful call, else a thrown Problem. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw problemOf(response.status, error);
  return data as T;
}

/** A find operation's answer as its page (the API answers an array only for the `.stream` media type). */
export async function page<P extends { content: unknown[] }>(
  call: Promise<{ data?: P | unknown[]; error?: unknown; response: Response }>,
): Promise<P> {
  const data = await ok(call);
  if (Array.isArray(data)) throw problemOf(0, { message: 'expected a page, got an array' });
  return data;
}
