import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema.js';
import type { ErrorBody } from './types.js';

export type { ErrorBody, Role, Schemas } from './types.js';

/** The credentials of this tab: kept in memory only, gone with a reload or sign-out. */
let authorization: string | undefined;

export function useCredentials(username: string, password: string): void {
  authorization = `Basic ${btoa(String.fromCodePoint(...new TextEncoder().encode(`${username}:${password}`)))}`;
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

/**
 * `credentials: 'omit'`: the browser neither prompts for a password on the API's 401 (its WWW-Authenticate
 * header) nor remembers one, so a sign-out is final; the Authorization header is the middleware's alone.
 */
export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'omit' });
api.use(credentials);

/** The API's own words for a failed call: its message, and the message of each field it names. */
export interface Problem {
  status: number;
  message: string;
  fields: Record<string, string>;
}

export function problemOf(status: number, body: unknown): Problem {
  const error = (typeof body === 'object' && body !== null ? body : {}) as Partial<ErrorBody>;
  const fields: Record<string, string> = {};
  for (const entry of error.errors ?? []) {
    fields[entry.field] = fields[entry.field] ? `${fields[entry.field]}; ${entry.defaultMessage}` : entry.defaultMessage;
  }
  return { status, message: error.message ?? `HTTP ${status}`, fields };
}

/** Data of a successful call, else a thrown Problem. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw problemOf(response.status, error);
  return data as T;
}

export function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && 'status' in value && 'fields' in value;
}

/** A find operation's answer as its page (the API answers an array only for the `.stream` media type). */
export async function page<P extends { content: unknown[] }>(call: Promise<{ data?: P | unknown[]; error?: unknown; response: Response }>): Promise<P> {
  const data = await ok(call);
  if (Array.isArray(data)) throw problemOf(0, { message: 'expected a page, got an array' });
  return data;
}
