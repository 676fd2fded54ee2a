import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import type { TestUser } from './app.js';

/** `null` is an anonymous caller. */
export type Caller = TestUser | null;

/**
 * Requests of the catalogue tests; `app` and `writer` are read at call time, as the test file sets them up in
 * `beforeAll`. Writes default to `writer`, reads to an anonymous caller.
 */
export function catalogueRequests(app: () => App, writer: () => TestUser) {
  const as = (user: Caller) => (user ? { authorization: user.authorization } : {});
  return {
    get: (url: string, user: Caller = null, accept?: string) =>
      app().inject({ method: 'GET', url, headers: { ...as(user), ...(accept ? { accept } : {}) } }),
    send: (method: 'POST' | 'PUT', url: string, payload: unknown, user: Caller = writer()) =>
      app().inject({ method, url, headers: as(user), payload: payload as Record<string, unknown> }),
    remove: (url: string, user: Caller = writer()) => app().inject({ method: 'DELETE', url, headers: as(user) }),
  };
}

/** Builds catalogue data through the API (and, where the API has no operation yet, through the data layer). */

export interface ProcessFormInput {
  domain?: unknown;
  title?: unknown;
  alias?: unknown;
  qualifiedIdentifier?: unknown;
  restricted?: unknown;
  visible?: unknown;
  capabilities?: unknown;
  documentTypes?: unknown;
  dependencies?: unknown;
  requiredICDs?: unknown;
}

let counter = 0;
/** A qualified identifier value no other call returns. */
export function uniqueValue(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

export function processForm(overrides: ProcessFormInput = {}): Record<string, unknown> {
  return {
    domain: 'billing',
    title: 'Billing',
    qualifiedIdentifier: `cenbii-procid-ubl::${uniqueValue('urn:process')}`,
    restricted: false,
    visible: true,
    capabilities: [],
    documentTypes: [],
    dependencies: [],
    requiredICDs: [],
    ...overrides,
  };
}

export function documentTypeForm(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title: 'Invoice',
    qualifiedIdentifier: `busdox-docid-qns::${uniqueValue('urn:invoice')}`,
    visible: true,
    processes: [],
    ...overrides,
  };
}

interface Created {
  identifier: string;
  qualifiedIdentifier: string;
  [key: string]: unknown;
}

async function add(app: App, user: TestUser, url: string, payload: Record<string, unknown>): Promise<Created> {
  const response = await app.inject({ method: 'POST', url, headers: { authorization: user.authorization }, payload });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

export const addProcess = (app: App, user: TestUser, overrides: ProcessFormInput = {}) =>
  add(app, user, '/rest/api/processes', processForm(overrides));

export const addDocumentType = (app: App, user: TestUser, overrides: Record<string, unknown> = {}) =>
  add(app, user, '/rest/api/document-types', documentTypeForm(overrides));

export async function insertCapability(db: Database, title: string): Promise<string> {
  const [row] = await db.query<{ id: string }>('INSERT INTO capabilities (title) VALUES ($1) RETURNING id', [title]);
  return (row as { id: string }).id;
}

/**
 * A participant of `serviceProviderId` that has `processIds`, written straight to the database: the provider
 * needs no user to add it through the API, and the participant rules do not apply.
 */
export async function insertParticipant(db: Database, serviceProviderId: string, processIds: string[]): Promise<string> {
  const organization = uniqueValue('org').toLowerCase();
  const [row] = await db.query<{ id: string }>(
    `INSERT INTO participants (service_provider_id, icd, organization_identifier, registration_date, last_modification_date, contact_name)
     VALUES ($1, '0192', $2, current_date, current_date, 'Contact') RETURNING id`,
    [serviceProviderId, organization],
  );
  const id = (row as { id: string }).id;
  await db.query(
    `INSERT INTO participant_processes (participant_id, process_id, icd, organization_identifier)
     SELECT $1, unnest($2::uuid[]), '0192', $3`,
    [id, processIds, organization],
  );
  return id;
}

/**
 * Runs `request` while another transaction holds `deletion` uncommitted, and commits that deletion once the
 * request had time to read the row and wait on it. Needs a second connection: PostgreSQL only.
 */
export async function whileDeleting<T>(db: Database, deletion: string, params: unknown[], request: () => Promise<T>): Promise<T> {
  let deleted!: () => void;
  let commit!: () => void;
  const deleting = new Promise<void>((resolve) => (deleted = resolve));
  const committing = new Promise<void>((resolve) => (commit = resolve));
  const transaction = db.transaction(async (tx) => {
    await tx.query(deletion, params);
    deleted();
    await committing;
  });
  await deleting;
  const response = request();
  await new Promise((resolve) => setTimeout(resolve, 300));
  commit();
  await transaction;
  return response;
}
