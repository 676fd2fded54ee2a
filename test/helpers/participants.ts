import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import type { TestUser } from './app.js';
import { call } from './requests.js';
import { uniqueNorwegianNumber } from './organization-numbers.js';

export const SCHEME = 'iso6523-actorid-upis';
export const PARTICIPANTS = '/rest/api/participants';

/** Today in UTC, as the service writes registration and modification dates. */
export const today = () => new Date().toISOString().slice(0, 10);

/** The day `days` away from today (UTC). */
export function dayFromToday(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

/** An organization identifier no other call returns: a valid Norwegian organization number (the forms' ICD is 0192). */
export const uniqueOrganization = uniqueNorwegianNumber;

export function participantForm(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    icd: '0192',
    organizationIdentifier: uniqueOrganization(),
    name: 'Acme Shipping AS',
    processes: [],
    contact: { name: 'Kari Nordmann', email: 'kari@acme.example', phoneNumber: '+47 22 00 00 00' },
    ...overrides,
  };
}

export interface Participant {
  identifier: string;
  qualifiedIdentifier: string;
  icd: string;
  organizationIdentifier: string;
  [key: string]: unknown;
}

export async function addParticipant(
  app: App,
  user: TestUser,
  overrides: Record<string, unknown> = {},
): Promise<Participant> {
  const response = await call(app, { method: 'POST', url: PARTICIPANTS, user, payload: participantForm(overrides) });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

/** The path of a participant by its qualified identifier, percent-encoded as clients send it. */
export const byQualified = (qualifiedIdentifier: string, suffix = '') =>
  `${PARTICIPANTS}/${encodeURIComponent(qualifiedIdentifier)}${suffix}`;
