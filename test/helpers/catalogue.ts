import { expect } from 'vitest';
import type { App } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import type { TestUser } from './app.js';
import { expectSecurityHeaders } from './assertions.js';
import { call, unique } from './requests.js';
import { uniqueNorwegianNumber } from './organization-numbers.js';

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

export function processForm(overrides: ProcessFormInput = {}): Record<string, unknown> {
  return {
    domain: 'billing',
    title: 'Billing',
    qualifiedIdentifier: `cenbii-procid-ubl::${unique('urn:process')}`,
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
    qualifiedIdentifier: `busdox-docid-qns::${unique('urn:invoice')}`,
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
  const response = await call(app, { method: 'POST', url, user, payload });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

export const addProcess = (app: App, user: TestUser, overrides: ProcessFormInput = {}) =>
  add(app, user, '/rest/api/processes', processForm(overrides));

export const addDocumentType = (app: App, user: TestUser, overrides: Record<string, unknown> = {}) =>
  add(app, user, '/rest/api/document-types', documentTypeForm(overrides));

/**
 * Adds `payload` at `url` as `user` in the vendor media type of `resource` (`processes`, `document-types`): 201
 * in that media type, with the security headers; an anonymous get serves the same in its own. Returns the created.
 */
export async function expectAddedAndServed(
  app: App,
  user: TestUser,
  url: string,
  resource: string,
  payload: Record<string, unknown>,
) {
  const add = `application/vnd.registry.${resource}.add.v1+json`;
  const response = await call(app, {
    method: 'POST',
    url,
    user,
    headers: { accept: add, 'content-type': `${add};charset=UTF-8` },
    payload: JSON.stringify(payload),
  });
  expect(response.statusCode, response.body).toBe(201);
  expect(response.headers['content-type']).toBe(`${add};charset=UTF-8`);
  expectSecurityHeaders(response);
  const created = response.json();
  const fetched = await call(app, { url: `${url}/${created.identifier}` });
  expect(fetched.statusCode).toBe(200);
  expect(fetched.headers['content-type']).toBe(`application/vnd.registry.${resource}.get.v1+json;charset=UTF-8`);
  expect(fetched.json()).toEqual(created);
  return created;
}

export async function insertCapability(db: Database, title: string): Promise<string> {
  const [row] = await db.query<{ id: string }>('INSERT INTO capabilities (title) VALUES ($1) RETURNING id', [title]);
  return (row as { id: string }).id;
}

/**
 * A participant of `serviceProviderId` that has `processIds`, written straight to the database: the provider
 * needs no user to add it through the API, and the participant rules do not apply.
 */
export async function insertParticipant(
  db: Database,
  serviceProviderId: string,
  processIds: string[],
): Promise<string> {
  const organization = uniqueNorwegianNumber();
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
export async function whileDeleting<T>(
  db: Database,
  deletion: string,
  params: unknown[],
  request: () => Promise<T>,
): Promise<T> {
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
