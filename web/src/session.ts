import { api, authorizationOf, forgetCredentials, problemOf, useAuthorization, type Problem, type Role } from './api/client.js';
import { activeTranslator } from './i18n.js';

export interface Session {
  username: string;
  role: Role;
}

/** A qualified identifier no registry holds: a probe whose answer tells the provider role from the others. */
const PROBE_PARTICIPANT = 'iso6523-actorid-upis::0192:000000000';

/**
 * Where a sign-in outlives a reload: this tab's sessionStorage (gone with the tab, never shared with another tab),
 * dropped at sign-out and after `IDLE_MS` without a request. See docs/decisions.md, "Issue 32, console".
 */
const STORED = 'registry.session';
const IDLE_MS = 30 * 60 * 1000;

interface Stored extends Session {
  authorization: string;
  lastUsed: number;
}

/**
 * Signs in with Basic credentials and finds the caller's role from read-only calls (the API has no "who am I"):
 * the users list answers only ADMIN; the participants list answers SERVICE_PROVIDER and REGISTRY_AUTHORITY; a
 * participant by qualified identifier answers (404) only a SERVICE_PROVIDER.
 */
export async function signIn(username: string, password: string): Promise<Session> {
  const authorization = authorizationOf(username, password);
  useAuthorization(authorization);
  try {
    const session = { username, role: await roleOfCaller() };
    write({ ...session, authorization, lastUsed: Date.now() });
    return session;
  } catch (error) {
    forgetCredentials();
    throw error as Problem;
  }
}

async function roleOfCaller(): Promise<Role> {
  const users = await api.GET('/rest/api/users', { params: { query: { size: 1 } } });
  if (users.response.ok) return 'ADMIN';
  if (users.response.status === 401) throw { ...problemOf(401, users.error), message: activeTranslator()('badCredentials') };
  if (users.response.status !== 403) throw problemOf(users.response.status, users.error);
  const participants = await api.GET('/rest/api/participants', { params: { query: { size: 1 } } });
  if (participants.response.status === 403) return 'ACCESS_POINT_PROVIDER';
  if (!participants.response.ok) throw problemOf(participants.response.status, participants.error);
  const probe = await api.GET('/rest/api/participants/{identifier}', { params: { path: { identifier: PROBE_PARTICIPANT } } });
  return probe.response.status === 403 ? 'REGISTRY_AUTHORITY' : 'SERVICE_PROVIDER';
}

function write(stored: Stored): void {
  try {
    sessionStorage.setItem(STORED, JSON.stringify(stored));
  } catch {
    // Storage refused (a private mode, a full quota): the sign-in lasts until a reload, as before.
  }
}

/** The sign-in this tab kept, if it is not idle too long: its credentials are in use again. */
export function restoreSession(now = Date.now()): Session | null {
  const stored = read();
  if (!stored || typeof stored.authorization !== 'string' || !(now - stored.lastUsed < IDLE_MS)) {
    signOut();
    return null;
  }
  useAuthorization(stored.authorization);
  return { username: stored.username, role: stored.role };
}

function read(): Stored | undefined {
  try {
    return JSON.parse(sessionStorage.getItem(STORED) ?? 'null') ?? undefined;
  } catch {
    return undefined;
  }
}

/** Each request with the kept credentials moves the idle limit on. */
api.use({
  onRequest({ request }) {
    const stored = read();
    if (stored && stored.authorization === request.headers.get('authorization')) write({ ...stored, lastUsed: Date.now() });
    return request;
  },
});

export function signOut(): void {
  forgetCredentials();
  try {
    sessionStorage.removeItem(STORED);
  } catch {
    // Nothing was kept.
  }
}

export const isAuthority = (session: Session | null) => session?.role === 'ADMIN' || session?.role === 'REGISTRY_AUTHORITY';
export const isProvider = (session: Session | null) => session?.role === 'SERVICE_PROVIDER';
