import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/app.js';
import type { TestApp, TestUser } from './app.js';

/** `null` is a caller without credentials. */
export type Caller = TestUser | null;
type Headers = Record<string, string>;

export interface Call {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  /** Absent or `null`: no credentials. */
  user?: Caller;
  payload?: unknown;
  headers?: Headers;
}

/** One request through `app.inject`, with `user`'s credentials. */
export function call(
  app: App,
  { method = 'GET', url, user, payload, headers = {} }: Call,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    headers: { ...(user ? { authorization: user.authorization } : {}), ...headers },
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
}

/** A test user by its name in `TestApp['users']`, or `null` for no credentials. */
export type CallerName = keyof TestApp['users'] | null;

/**
 * Reads and writes on the test app: as `reads` and `writes` unless a request names its caller (`null`: none).
 * `t` is read at request time, so this can be made before the test app has started.
 */
export function requests(t: Pick<TestApp, 'app' | 'users'>, as: { reads: CallerName; writes: CallerName }) {
  const named = (name: CallerName) => (name === null ? null : t.users[name]);
  return {
    get: (url: string, user: Caller = named(as.reads), headers: Headers = {}) => call(t.app, { url, user, headers }),
    send: (
      method: 'POST' | 'PUT',
      url: string,
      payload: unknown,
      user: Caller = named(as.writes),
      headers: Headers = {},
    ) => call(t.app, { method, url, user, payload, headers }),
    remove: (url: string, user: Caller = named(as.writes)) => call(t.app, { method: 'DELETE', url, user }),
  };
}
export type Requests = ReturnType<typeof requests>;

let counter = 0;
/** A text no other call returns, so that tests never collide on a unique key. */
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}
