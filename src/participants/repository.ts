import { onForeignKeyViolation, onUniqueViolation, type Database, type Queryable } from '../db/database.js';
import { Conditions, escapeLikeWildcards, selectPage } from '../db/sql.js';
import { ConflictError } from '../core/errors.js';
import type { PageRequest, Sortable } from '../core/paging.js';
import { PROCESS_RESPONSE_COLUMNS } from '../processes/repository.js';
import { PARTICIPANT_SCHEME, qualifiedIdentifierOf, type Organization, type ParticipantKey } from './identifiers.js';
import type { Process } from '../processes/schemas.js';
import type { Participant, ParticipantFilter } from './schemas.js';

/** Today in UTC, whatever the session's time zone: the day of registrations, changes and expiry. */
const TODAY = `(now() AT TIME ZONE 'UTC')::date`;

/**
 * The SQL condition that participant row `alias` is live: one whose delete date has come is gone from every answer.
 * Organizations and service providers count participants with it too.
 */
export const participantIsLive = (alias: string) => `(${alias}.delete_date IS NULL OR ${alias}.delete_date > ${TODAY})`;

/** Whose participants a caller sees: a service provider's id, or null for all (ADMIN, REGISTRY_AUTHORITY). */
export type Scope = string | null;

/** The processes of a participant as one JSON array, in qualified identifier order. */
export const processesOf = (participantId: string) => `
  (SELECT coalesce(json_agg(x ORDER BY x."qualifiedIdentifier", x.identifier), '[]'::json)
     FROM (SELECT ${PROCESS_RESPONSE_COLUMNS} FROM participant_processes pp JOIN processes p ON p.id = pp.process_id
            WHERE pp.participant_id = ${participantId}) x)`;

const participantColumns = (withProcesses: boolean) => `
  pa.id AS identifier,
  '${PARTICIPANT_SCHEME}::' || pa.icd || ':' || pa.organization_identifier AS "qualifiedIdentifier",
  pa.icd, pa.organization_identifier AS "organizationIdentifier",
  pa.organization_part_identifier AS "organizationPartIdentifier", pa.source_indicator AS "sourceIndicator", pa.name,
  pa.registration_date AS "registrationDate", pa.last_modification_date AS "lastModificationDate",
  pa.delete_date AS "deleteDate",
  json_build_object('name', pa.contact_name, 'email', pa.contact_email, 'phoneNumber', pa.contact_phone) AS contact,
  (SELECT json_build_object('identifier', sp.id, 'title', sp.title) FROM service_providers sp
    WHERE sp.id = pa.service_provider_id) AS provider
  ${withProcesses ? `, ${processesOf('pa.id')} AS processes` : ''}`;

const QUALIFIED_VALUE = `pa.icd || ':' || pa.organization_identifier`;

export const PARTICIPANT_SORTABLE: Sortable = {
  identifier: 'pa.id',
  qualifiedIdentifier: QUALIFIED_VALUE,
  'qualifiedIdentifier.scheme': `'${PARTICIPANT_SCHEME}'::text`,
  'qualifiedIdentifier.value': QUALIFIED_VALUE,
  icd: 'pa.icd',
  organizationIdentifier: 'pa.organization_identifier',
  organizationPartIdentifier: 'pa.organization_part_identifier',
  sourceIndicator: 'pa.source_indicator',
  name: 'pa.name',
  registrationDate: 'pa.registration_date',
  lastModificationDate: 'pa.last_modification_date',
  deleteDate: 'pa.delete_date',
  'contact.name': 'pa.contact_name',
  'contact.email': 'pa.contact_email',
  'contact.phoneNumber': 'pa.contact_phone',
  'provider.identifier': 'pa.service_provider_id',
  'provider.title': '(SELECT sp.title FROM service_providers sp WHERE sp.id = pa.service_provider_id)',
};
export const PARTICIPANT_TIE_BREAKER = 'pa.id';

function scoped(scope: Scope): Conditions {
  const conditions = new Conditions().where(participantIsLive('pa'));
  if (scope !== null) conditions.where(`pa.service_provider_id = ${conditions.param(scope)}`);
  return conditions;
}

function filterConditions(filter: ParticipantFilter, scope: Scope): Conditions {
  const conditions = scoped(scope);
  const text = (filter.query ?? filter.search)?.toLowerCase();
  if (text) {
    const escaped = escapeLikeWildcards(text);
    // Matches the trigram index on lower(name) and the prefix index on organization_identifier.
    conditions.where(`(lower(pa.name) LIKE ${conditions.param(`%${escaped}%`)}
                       OR pa.organization_identifier LIKE ${conditions.param(`${escaped}%`)})`);
  }
  if (filter.icd) conditions.where(`pa.icd = ${conditions.param(filter.icd)}`);
  if (filter.lastModificationDate) conditions.where(`pa.last_modification_date = ${conditions.param(filter.lastModificationDate)}::date`);
  if (filter.lastModificationDateFrom) conditions.where(`pa.last_modification_date >= ${conditions.param(filter.lastModificationDateFrom)}::date`);
  if (filter.lastModificationDateTo) conditions.where(`pa.last_modification_date <= ${conditions.param(filter.lastModificationDateTo)}::date`);
  return conditions;
}

export function findParticipants(db: Queryable, filter: ParticipantFilter, scope: Scope, page: PageRequest) {
  return selectPage<Participant>(db, {
    select: participantColumns(filter.processes),
    from: 'participants pa',
    conditions: filterConditions(filter, scope),
    orderBy: page.orderBy,
    limit: page.size,
    offset: page.offset,
  });
}

/** Every hit, read through a cursor in batches: memory does not grow with the number of participants. */
export function streamParticipants(db: Database, filter: ParticipantFilter, scope: Scope, orderBy: string) {
  const conditions = filterConditions(filter, scope);
  return db.stream<Participant>(
    `SELECT ${participantColumns(filter.processes)} FROM participants pa ${conditions.clause} ${orderBy}`,
    conditions.params,
    500,
  );
}

/** The live participant a key names within the caller's scope. */
function located(key: ParticipantKey, scope: Scope): Conditions {
  const conditions = scoped(scope);
  if (key.kind === 'identifier') return conditions.where(`pa.id = ${conditions.param(key.id)}::uuid`);
  const { icd, organizationIdentifier } = key.organization;
  return conditions
    .where(`pa.icd = ${conditions.param(icd)}`)
    .where(`pa.organization_identifier = ${conditions.param(organizationIdentifier)}`);
}

export async function getParticipant(db: Queryable, key: ParticipantKey, scope: Scope): Promise<Participant | undefined> {
  const conditions = located(key, scope);
  const [participant] = await db.query<Participant>(
    `SELECT ${participantColumns(true)} FROM participants pa ${conditions.clause}`,
    conditions.params,
  );
  return participant;
}

export async function getParticipantProcesses(db: Queryable, key: ParticipantKey, scope: Scope): Promise<Process[] | undefined> {
  const conditions = located(key, scope);
  const [row] = await db.query<{ processes: Process[] }>(
    `SELECT ${processesOf('pa.id')} AS processes FROM participants pa ${conditions.clause}`,
    conditions.params,
  );
  return row?.processes;
}

export interface LockedParticipant extends Organization {
  id: string;
  serviceProviderId: string;
  processIds: string[];
}

/** The participant a key names, locked until the transaction ends, with the processes it has. */
export async function lockParticipant(tx: Queryable, key: ParticipantKey, scope: Scope): Promise<LockedParticipant | undefined> {
  const conditions = located(key, scope);
  const [row] = await tx.query<Omit<LockedParticipant, 'processIds'>>(
    `SELECT pa.id, pa.icd, pa.organization_identifier AS "organizationIdentifier", pa.service_provider_id AS "serviceProviderId"
       FROM participants pa ${conditions.clause} FOR UPDATE`,
    conditions.params,
  );
  if (!row) return undefined;
  const processes = await tx.query<{ id: string }>(
    'SELECT process_id AS id FROM participant_processes WHERE participant_id = $1',
    [row.id],
  );
  return { ...row, processIds: processes.map((process) => process.id) };
}

/**
 * Removes the organization's participants whose delete date has come, inside the caller's transaction,
 * so that they no longer hold the organization or its processes against a new registration.
 */
export async function purgeExpired(tx: Queryable, organization: Organization): Promise<void> {
  await tx.query(
    `DELETE FROM participants WHERE icd = $1 AND organization_identifier = $2 AND delete_date <= ${TODAY}`,
    [organization.icd, organization.organizationIdentifier],
  );
}

export interface ContactRecord {
  name: string;
  email: string | null;
  phoneNumber: string | null;
}

export interface NewParticipant extends Organization {
  serviceProviderId: string;
  organizationPartIdentifier: string | null;
  sourceIndicator: string | null;
  name: string | null;
  deleteDate: string | null;
  contact: ContactRecord;
}

const alreadyRegistered = (organization: Organization) =>
  new ConflictError(`The service provider already has a participant for ${qualifiedIdentifierOf(organization)}`);

/** Inserts the participant; the unique key (organization, provider) turns a duplicate, even a racing one, into 409. */
export async function insertParticipant(tx: Queryable, record: NewParticipant): Promise<string> {
  const [row] = await onUniqueViolation(tx.query<{ id: string }>(
    `INSERT INTO participants (service_provider_id, icd, organization_identifier, organization_part_identifier,
                               source_indicator, name, registration_date, last_modification_date, delete_date,
                               contact_name, contact_email, contact_phone)
     VALUES ($1, $2, $3, $4, $5, $6, ${TODAY}, ${TODAY}, $7, $8, $9, $10) RETURNING id`,
    [record.serviceProviderId, record.icd, record.organizationIdentifier, record.organizationPartIdentifier,
      record.sourceIndicator, record.name, record.deleteDate, record.contact.name, record.contact.email,
      record.contact.phoneNumber],
  ), () => alreadyRegistered(record));
  return (row as { id: string }).id;
}

export async function updateParticipant(tx: Queryable, id: string, contact: ContactRecord, deleteDate: string | null): Promise<void> {
  await tx.query(
    `UPDATE participants SET contact_name = $2, contact_email = $3, contact_phone = $4, delete_date = $5,
            last_modification_date = ${TODAY}
      WHERE id = $1`,
    [id, contact.name, contact.email, contact.phoneNumber, deleteDate],
  );
}

/**
 * Gives the participant exactly `processIds`. The unique key (organization, process) of participant_processes
 * decides atomically whether another provider already serves a process of this organization: those rows
 * are not inserted, and the request fails with 409 naming them.
 */
export async function setProcesses(tx: Queryable, participant: LockedParticipant, processIds: string[]): Promise<void> {
  await tx.query(
    'DELETE FROM participant_processes WHERE participant_id = $1 AND NOT (process_id = ANY($2::uuid[]))',
    [participant.id, processIds],
  );
  const added = processIds.filter((id) => !participant.processIds.includes(id));
  if (added.length === 0) return;
  const inserted = await onForeignKeyViolation(tx.query<{ id: string }>(
    `INSERT INTO participant_processes (participant_id, process_id, icd, organization_identifier)
     SELECT $1, unnest($2::uuid[]), $3, $4
     ON CONFLICT DO NOTHING RETURNING process_id AS id`,
    [participant.id, added, participant.icd, participant.organizationIdentifier],
  ), () => new ConflictError('A process named in processes was deleted meanwhile; nothing was changed'));
  const taken = added.filter((id) => !inserted.some((row) => row.id === id));
  if (taken.length === 0) return;
  const names = await tx.query<{ name: string }>(
    `SELECT scheme || '::' || value AS name FROM processes WHERE id = ANY($1::uuid[]) ORDER BY scheme, value`,
    [taken],
  );
  throw new ConflictError(
    `Process ${names.map((row) => `'${row.name}'`).join(', ')} of organization ${qualifiedIdentifierOf(participant)} `
    + 'is already served by another service provider',
  );
}

export async function deleteParticipant(tx: Queryable, key: ParticipantKey, scope: Scope): Promise<boolean> {
  const conditions = located(key, scope);
  const deleted = await tx.query(`DELETE FROM participants pa ${conditions.clause} RETURNING pa.id`, conditions.params);
  return deleted.length > 0;
}

export async function serviceProviderExists(tx: Queryable, id: string): Promise<boolean> {
  const rows = await tx.query('SELECT 1 FROM service_providers WHERE id = $1 FOR KEY SHARE', [id]);
  return rows.length > 0;
}

/** Moves the participant, its contact and processes to another provider; 409 if that one has the organization. */
export async function transferParticipant(tx: Queryable, participant: LockedParticipant, targetId: string): Promise<void> {
  if (participant.serviceProviderId === targetId) throw alreadyRegistered(participant);
  await purgeExpired(tx, participant);
  await onUniqueViolation(tx.query(
    `UPDATE participants SET service_provider_id = $2, last_modification_date = ${TODAY} WHERE id = $1`,
    [participant.id, targetId],
  ), () => alreadyRegistered(participant));
}

export interface ProcessRule {
  id: string;
  scheme: string;
  value: string;
  restricted: boolean;
  requiredIcds: string[];
  dependencies: { id: string; name: string }[];
}

/** What the participant rules need to know of the processes a form names. */
export async function processRules(tx: Queryable, ids: string[]): Promise<ProcessRule[]> {
  if (ids.length === 0) return [];
  return tx.query<ProcessRule>(
    `SELECT p.id, p.scheme, p.value, p.restricted, p.required_icds AS "requiredIcds",
            (SELECT coalesce(json_agg(json_build_object('id', d.id, 'name', d.scheme || '::' || d.value) ORDER BY d.value), '[]'::json)
               FROM process_dependencies pd JOIN processes d ON d.id = pd.dependency_id
              WHERE pd.process_id = p.id) AS dependencies
       FROM processes p WHERE p.id = ANY($1::uuid[])`,
    [ids],
  );
}
