import {
  api,
  authorizationOf,
  forgetCredentials,
  ok,
  problemOf,
  useAuthorization,
  waitWords,
  type Problem,
  type Role,
} from './api/client.js';
import { activeTranslator } from './i18n.js';

export interface Session {
  username: string;
  role: Role;
}

/**
 * A sign-in outlives a reload of its tab, never the tab: the token of a session the service opened (never the
 * password) is kept in this tab's sessionStorage. The service ends the session at sign-out, after 30 minutes unused,
 * 8 hours after it began and at a new password. See docs/design/sign-in.md, "Console sessions".
 */
const STORED = 'registry.session';

interface Stored extends Session {
  token: string;
}

function read(): Stored | undefined {
  try {
    const stored = JSON.parse(sessionStorage.getItem(STORED) ?? 'null') as Stored | null;
    return stored && typeof stored.token === 'string' ? stored : undefined;
  } catch {
    return undefined;
  }
}

function forget(): void {
  forgetCredentials();
  try {
    sessionStorage.removeItem(STORED);
  } catch {
    // Nothing was kept.
  }
}

/** Opens a session with the username and password, which are forgotten at once; the service says the role. */
export async function signIn(username: string, password: string): Promise<Session> {
  useAuthorization(authorizationOf(username, password));
  try {
    const answer = await api.POST('/rest/api/sessions', {});
    const t = activeTranslator();
    if (answer.response.status === 401)
      throw { ...problemOf(401, answer.error), message: t('badCredentials') } satisfies Problem;
    if (answer.response.status === 429) {
      const wait = waitWords(t, Number(answer.response.headers.get('retry-after') ?? 60));
      throw { ...problemOf(429, answer.error), message: t('signInLocked', { wait }) } satisfies Problem;
    }
    const { token, username: name, role } = await ok(Promise.resolve(answer));
    useAuthorization(`Bearer ${token}`);
    try {
      sessionStorage.setItem(STORED, JSON.stringify({ username: name, role, token } satisfies Stored));
    } catch {
      // Storage refused (a private mode, a full quota): the sign-in lasts until a reload.
    }
    return { username: name, role };
  } catch (error) {
    forgetCredentials();
    throw error as Problem;
  }
}

/** The sign-in this tab kept, in use again (`sessionIsLive` asks the service whether it still is). */
export function restoreSession(): Session | null {
  const stored = read();
  if (!stored) return null;
  useAuthorization(`Bearer ${stored.token}`);
  return { username: stored.username, role: stored.role };
}

export async function sessionIsLive(): Promise<boolean> {
  return (await api.GET('/rest/api/sessions/current')).response.ok;
}

/** Ends the session at the service too, so that a copy of the token opens nothing; forgotten here whatever it answers. */
export async function signOut(): Promise<void> {
  if (read()) await api.DELETE('/rest/api/sessions/current').catch(() => undefined);
  forget();
}

let ended: () => void = () => {};

/** `listener` hears when the service says the session has ended (unused too long, a new password): signed out here too. */
export function onSessionEnded(listener: () => void): void {
  ended = listener;
}

api.use({
  onResponse({ request, response }) {
    if (response.status === 401 && request.headers.get('authorization')?.startsWith('Bearer ')) {
      forget();
      ended();
    }
    return response;
  },
});

export const isAuthority = (session: Session | null) =>
  session?.role === 'ADMIN' || session?.role === 'REGISTRY_AUTHORITY';
export const isProvider = (session: Session | null) => session?.role === 'SERVICE_PROVIDER';
