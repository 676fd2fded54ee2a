import { api, forgetCredentials, problemOf, useCredentials, type Problem, type Role } from './api/client.js';

export interface Session {
  username: string;
  role: Role;
}

/** A qualified identifier no registry holds: a probe whose answer tells the provider role from the others. */
const PROBE_PARTICIPANT = 'iso6523-actorid-upis::0192:000000000';

/**
 * Signs in with Basic credentials and finds the caller's role from read-only calls (the API has no "who am I"):
 * the users list answers only ADMIN; the participants list answers SERVICE_PROVIDER and REGISTRY_AUTHORITY; a
 * participant by qualified identifier answers (404) only a SERVICE_PROVIDER.
 */
export async function signIn(username: string, password: string): Promise<Session> {
  useCredentials(username, password);
  try {
    const users = await api.GET('/rest/api/users', { params: { query: { size: 1 } } });
    if (users.response.ok) return { username, role: 'ADMIN' };
    if (users.response.status !== 403) throw problemOf(users.response.status, users.error);
    const participants = await api.GET('/rest/api/participants', { params: { query: { size: 1 } } });
    if (participants.response.status === 403) return { username, role: 'ACCESS_POINT_PROVIDER' };
    if (!participants.response.ok) throw problemOf(participants.response.status, participants.error);
    const probe = await api.GET('/rest/api/participants/{identifier}', { params: { path: { identifier: PROBE_PARTICIPANT } } });
    return { username, role: probe.response.status === 403 ? 'REGISTRY_AUTHORITY' : 'SERVICE_PROVIDER' };
  } catch (error) {
    forgetCredentials();
    throw error as Problem;
  }
}

export function signOut(): void {
  forgetCredentials();
}

export const isAuthority = (session: Session | null) => session?.role === 'ADMIN' || session?.role === 'REGISTRY_AUTHORITY';
export const isProvider = (session: Session | null) => session?.role === 'SERVICE_PROVIDER';
