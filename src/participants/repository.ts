import { onForeignKeyViolation, onUniqueViolation, STREAM_BATCH_MAX_BYTES, type Database, type Queryable } from '../db/database.js';
import { Conditions, escapeLikeWildcards, selectPage } from '../db/sql.js';
import { ConflictError } from '../core/errors.js';
import type { PageRequest, Sortable } from '../core/paging.js';
import { PROCESS_RESPONSE_COLUMNS, processesFromDatabase, type ProcessSource } from '../processes/repository.js';
import { PARTICIPANT_SCHEME, qualifiedIdentifierOf, type Organization, type ParticipantKey } from './identifiers.js';
import type { Process } from '../processes/schemas.js';
import type { Participant, ParticipantFilter } from './schemas.js';

/** Today in UTC, whatever the session's time zone: the day of registrations, changes and expiry. */
const TODAY = `(now() AT TIME ZONE 'UTC')::date`;

/**
 * The SQL condition that participant row `alias` is live: one whose delete date has come is gone from every answer.
 * Organizations and service providers count participants with it too.
 */
export const participantIsLive = (alias: string) =>
  // As a subquery, today is computed once per statement rather than once per row tested.
  `(${alias}.delete_date IS NULL OR ${alias}.delete_date > (SELECT ${TODAY}))`;

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

/** What `query` (or its alias `search`) asks for, lowercased; empty or undefined for no name/number match. */
const searchTextOf = (filter: ParticipantFilter) => (filter.query ?? filter.search)?.toLowerCase();

function filterConditions(filter: ParticipantFilter, scope: Scope): Conditions {
  const conditions = scoped(scope);
  const text = searchTextOf(filter);
  if (text) {
    const escaped = escapeLikeWildcards(text);
    // Matches the trigram index on name_lower (the stored lower(name)) and the prefix index on organization_identifier.
    conditions.where(`(pa.name_lower LIKE ${conditions.param(`%${escaped}%`)}
                       OR pa.organization_identifier LIKE ${conditions.param(`${escaped}%`)})`);
  }
  if (filter.icd) conditions.where(`pa.icd = ${conditions.param(filter.icd)}`);
  if (filter.lastModificationDate) conditions.where(`pa.last_modification_date = ${conditions.param(filter.lastModificationDate)}::date`);
  if (filter.lastModificationDateFrom) conditions.where(`pa.last_modification_date >= ${conditions.param(filter.lastModificationDateFrom)}::date`);
  if (filter.lastModificationDateTo) conditions.where(`pa.last_modification_date <= ${conditions.param(filter.lastModificationDateTo)}::date`);
  return conditions;
}

/**
 * A query of at least a trigram's length is found through the trigram index, each hit read from the table for
 * the recheck: the page is then found, and the hits counted, in that one scan. A shorter one cannot use the
 * index and matches broadly: walking the page's order finds its page at once, and the total is counted apart.
 */
const TRIGRAM = 3;

export function findParticipants(db: Queryable, filter: ParticipantFilter, scope: Scope, page: PageRequest) {
  return selectPage<Participant>(db, {
    select: participantColumns(filter.processes),
    from: 'participants pa',
    key: 'pa.id',
    countInPageScan: (searchTextOf(filter)?.length ?? 0) >= TRIGRAM,
    conditions: filterConditions(filter, scope),
    page,
  });
}

/** A participant as the stream reads it: plain columns, which cost the database and the driver least per row. */
interface ParticipantRow {
  id: string;
  icd: string;
  organization_identifier: string;
  organization_part_identifier: string | null;
  source_indicator: string | null;
  name: string | null;
  registration_date: string;
  last_modification_date: string;
  delete_date: string | null;
  contact_name: string;
  contact_email: string | null;
  contact_phone: string | null;
  service_provider_id: string;
  provider_title: string;
  processes?: Process[];
}

const participantOfRow = (row: ParticipantRow): Participant => ({
  identifier: row.id,
  qualifiedIdentifier: `${PARTICIPANT_SCHEME}::${row.icd}:${row.organization_identifier}`,
  icd: row.icd,
  organizationIdentifier: row.organization_identifier,
  organizationPartIdentifier: row.organization_part_identifier,
  sourceIndicator: row.source_indicator,
  name: row.name,
  registrationDate: row.registration_date,
  lastModificationDate: row.last_modification_date,
  deleteDate: row.delete_date,
  contact: { name: row.contact_name, email: row.contact_email, phoneNumber: row.contact_phone },
  provider: { identifier: row.service_provider_id, title: row.provider_title },
  ...(row.processes && { processes: row.processes }),
});

/**
 * Rows a stream asks the cursor for at a time: few round trips, while a batch (and the one fetched meanwhile) stays
 * small enough to be collected young; 5,000 gave no more rows per second and a higher peak of resident memory.
 */
const STREAM_BATCH = 1000;

/**
 * Every hit, read through a cursor and handed out in batches: memory does not grow with the number of participants.
 * The provider is joined (the planner memoizes its few rows) rather than looked up by a subquery per row. With its
 * processes a row grows with their number, so a batch then also stops at `maxBytes`; without them its fields bound
 * it (1,000 rows stay under about 4.5 MB), so its batch is not measured, which would cost a third of its speed.
 */
export async function* streamParticipants(
  db: Database, filter: ParticipantFilter, scope: Scope, orderBy: string, maxBytes = STREAM_BATCH_MAX_BYTES,
): AsyncGenerator<Participant[]> {
  const conditions = filterConditions(filter, scope);
  const rows = db.stream<ParticipantRow>(
    `SELECT pa.id, pa.icd, pa.organization_identifier, pa.organization_part_identifier, pa.source_indicator, pa.name,
            pa.registration_date, pa.last_modification_date, pa.delete_date, pa.contact_name, pa.contact_email,
            pa.contact_phone, pa.service_provider_id, sp.title AS provider_title
            ${filter.processes ? `, ${processesOf('pa.id')} AS processes` : ''}
       FROM participants pa JOIN service_providers sp ON sp.id = pa.service_provider_id
       ${conditions.clause} ${orderBy}`,
    conditions.params,
    STREAM_BATCH,
    filter.processes ? maxBytes : undefined,
  );
  for await (const batch of rows) yield batch.map(participantOfRow);
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

/** The ids of participant `participantId`'s processes, as a text array. */
const processIdsOf = (participantId: string) =>
  `ARRAY(SELECT pp.process_id::text FROM participant_processes pp WHERE pp.participant_id = ${participantId})`;

/** One indexed participant row with its process ids; the processes themselves come from `processes`. */
export async function getParticipant(
  db: Queryable, key: ParticipantKey, scope: Scope, processes: ProcessSource = processesFromDatabase(db),
): Promise<Participant | undefined> {
  const conditions = located(key, scope);
  const [row] = await db.query<Omit<Participant, 'processes'> & { processIds: string[] }>(
    `SELECT ${participantColumns(false)}, ${processIdsOf('pa.id')} AS "processIds" FROM participants pa ${conditions.clause}`,
    conditions.params,
  );
  if (!row) return undefined;
  const { processIds, ...participant } = row;
  return { ...participant, processes: await processes.processesIn(processIds) };
}

export async function getParticipantProcesses(
  db: Queryable, key: ParticipantKey, scope: Scope, processes: ProcessSource = processesFromDatabase(db),
): Promise<Process[] | undefined> {
  const conditions = located(key, scope);
  const [row] = await db.query<{ processIds: string[] }>(
    `SELECT ${processIdsOf('pa.id')} AS "processIds" FROM participants pa ${conditions.clause}`,
    conditions.params,
  );
  return row && processes.processesIn(row.processIds);
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

/** Which participants are due to expire: those whose delete date is `today` (default: today in UTC) or earlier. */
export interface ExpiryDue {
  today?: string;
  /** Only this organization's (a write clearing the way for a new registration). */
  organization?: Organization;
  /** Only these organizations' (a bulk import clearing the way for its batch). */
  organizations?: readonly Organization[];
  /** Only this service provider's (a provider being deleted). */
  serviceProviderId?: string;
  limit?: number;
}

/**
 * Removes participants whose delete date has come, inside the caller's transaction, and returns them as they were.
 * They are locked first (waiting, not skipping): of two transactions expiring the same participant, the second
 * finds it gone once the first commits, so each is removed, and logged by the caller, exactly once.
 */
export async function removeExpired(tx: Queryable, due: ExpiryDue): Promise<Participant[]> {
  const conditions = new Conditions();
  conditions.where(`pa.delete_date <= ${due.today === undefined ? TODAY : `${conditions.param(due.today)}::date`}`);
  if (due.organization) {
    conditions.where(`pa.icd = ${conditions.param(due.organization.icd)}`)
      .where(`pa.organization_identifier = ${conditions.param(due.organization.organizationIdentifier)}`);
  }
  if (due.organizations) {
    conditions.where(`(pa.icd, pa.organization_identifier) IN (SELECT * FROM unnest(${conditions.param(due.organizations.map((o) => o.icd))}::text[], `
      + `${conditions.param(due.organizations.map((o) => o.organizationIdentifier))}::text[]))`);
  }
  if (due.serviceProviderId) conditions.where(`pa.service_provider_id = ${conditions.param(due.serviceProviderId)}::uuid`);
  const locked = await tx.query<{ id: string }>(
    `SELECT pa.id FROM participants pa ${conditions.clause} ORDER BY pa.id LIMIT ${conditions.param(due.limit ?? null)} FOR UPDATE`,
    conditions.params,
  );
  if (locked.length === 0) return [];
  const ids = locked.map((row) => row.id);
  const expired = await tx.query<Participant>(
    `SELECT ${participantColumns(true)} FROM participants pa WHERE pa.id = ANY($1::uuid[]) ORDER BY pa.id`,
    [ids],
  );
  await tx.query('DELETE FROM participants WHERE id = ANY($1::uuid[])', [ids]);
  return expired;
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

/**
 * Inserts the participant with its processes in one statement; returns it as the API shows it, its process ids
 * in place of its processes. The unique key (organization, provider) turns a duplicate, even a racing one, into 409.
 */
export async function insertParticipant(
  tx: Queryable, record: NewParticipant, processIds: readonly string[],
): Promise<Omit<Participant, 'processes'> & { processIds: string[] }> {
  const [row] = await onUniqueViolation(onForeignKeyViolation(tx.query<Omit<Participant, 'processes'> & { processIds: string[] }>(
    `WITH pa AS (
       INSERT INTO participants (service_provider_id, icd, organization_identifier, organization_part_identifier,
                                 source_indicator, name, registration_date, last_modification_date, delete_date,
                                 contact_name, contact_email, contact_phone)
       VALUES ($1, $2, $3, $4, $5, $6, ${TODAY}, ${TODAY}, $7, $8, $9, $10) RETURNING *),
     linked AS (${linkProcesses('pa', '$11')})
     SELECT ${participantColumns(false)}, ARRAY(SELECT id::text FROM linked) AS "processIds" FROM pa`,
    [record.serviceProviderId, record.icd, record.organizationIdentifier, record.organizationPartIdentifier,
      record.sourceIndicator, record.name, record.deleteDate, record.contact.name, record.contact.email,
      record.contact.phoneNumber, processIds],
  ), processDeletedMeanwhile), () => alreadyRegistered(record));
  const inserted = row as Omit<Participant, 'processes'> & { processIds: string[] };
  await refuseTaken(tx, record, processIds, inserted.processIds);
  return inserted;
}

/**
 * Inserts many participants in one statement, in the order given, leaving out those whose provider already has
 * the organization (a participant stored before, or earlier in `records`); returns the stored ones as the API shows them.
 */
export async function insertParticipants(tx: Queryable, records: readonly NewParticipant[]): Promise<Omit<Participant, 'processes'>[]> {
  const column = <T>(of: (record: NewParticipant) => T) => records.map(of);
  return onForeignKeyViolation(tx.query<Omit<Participant, 'processes'>>(
    `WITH pa AS (
       INSERT INTO participants (service_provider_id, icd, organization_identifier, organization_part_identifier,
                                 source_indicator, name, registration_date, last_modification_date, delete_date,
                                 contact_name, contact_email, contact_phone)
       SELECT r.provider, r.icd, r.organization, r.part, r.source, r.name, ${TODAY}, ${TODAY}, r.delete_date,
              r.contact_name, r.contact_email, r.contact_phone
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::date[], $8::text[],
                     $9::text[], $10::text[]) WITH ORDINALITY
              AS r(provider, icd, organization, part, source, name, delete_date, contact_name, contact_email, contact_phone, position)
        ORDER BY r.position
       ON CONFLICT DO NOTHING RETURNING *)
     SELECT ${participantColumns(false)} FROM pa`,
    [column((r) => r.serviceProviderId), column((r) => r.icd), column((r) => r.organizationIdentifier),
      column((r) => r.organizationPartIdentifier), column((r) => r.sourceIndicator), column((r) => r.name),
      column((r) => r.deleteDate), column((r) => r.contact.name), column((r) => r.contact.email), column((r) => r.contact.phoneNumber)],
  ), processDeletedMeanwhile);
}

/**
 * Gives many participants their processes in one statement, in the order given; returns the links stored. A link
 * left out is a process another provider already serves for the organization (the unique key decides, as one by one).
 */
export async function linkProcessesOf(
  tx: Queryable, links: readonly { participantId: string; processId: string }[],
): Promise<{ participantId: string; processId: string }[]> {
  return onForeignKeyViolation(tx.query<{ participantId: string; processId: string }>(
    `INSERT INTO participant_processes (participant_id, process_id, icd, organization_identifier)
     SELECT pa.id, l.process_id, pa.icd, pa.organization_identifier
       FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS l(participant_id, process_id, position)
       JOIN participants pa ON pa.id = l.participant_id
      ORDER BY l.position
     ON CONFLICT DO NOTHING RETURNING participant_id AS "participantId", process_id AS "processId"`,
    [links.map((link) => link.participantId), links.map((link) => link.processId)],
  ), processDeletedMeanwhile);
}

/**
 * The INSERT that gives the participant row `pa` of `from` (SQL) the processes `processIds` (a parameter). The unique key
 * (organization, process) of participant_processes decides atomically whether another provider already serves
 * a process of this organization: those rows are left out (refuseTaken names them).
 */
const linkProcesses = (from: string, processIds: string) => `
  INSERT INTO participant_processes (participant_id, process_id, icd, organization_identifier)
  SELECT pa.id, unnest(${processIds}::uuid[]), pa.icd, pa.organization_identifier FROM ${from}
  ON CONFLICT DO NOTHING RETURNING process_id AS id`;

const processDeletedMeanwhile = () => new ConflictError('A process named in processes was deleted meanwhile; nothing was changed');

/** 409 naming the processes `wanted` that were not `inserted`: another provider serves them for the organization. */
async function refuseTaken(tx: Queryable, organization: Organization, wanted: readonly string[], inserted: readonly string[]): Promise<void> {
  const taken = wanted.filter((id) => !inserted.includes(id));
  if (taken.length === 0) return;
  const names = await tx.query<{ name: string }>(
    `SELECT scheme || '::' || value AS name FROM processes WHERE id = ANY($1::uuid[]) ORDER BY scheme, value`,
    [taken],
  );
  throw new ConflictError(
    `Process ${names.map((row) => `'${row.name}'`).join(', ')} of organization ${qualifiedIdentifierOf(organization)} `
    + 'is already served by another service provider',
  );
}

export async function updateParticipant(tx: Queryable, id: string, contact: ContactRecord, deleteDate: string | null): Promise<void> {
  await tx.query(
    `UPDATE participants SET contact_name = $2, contact_email = $3, contact_phone = $4, delete_date = $5,
            last_modification_date = ${TODAY}
      WHERE id = $1`,
    [id, contact.name, contact.email, contact.phoneNumber, deleteDate],
  );
}

/** Gives the participant exactly `processIds`; 409 when another provider serves one of the added ones. */
export async function setProcesses(tx: Queryable, participant: LockedParticipant, processIds: string[]): Promise<void> {
  await tx.query(
    'DELETE FROM participant_processes WHERE participant_id = $1 AND NOT (process_id = ANY($2::uuid[]))',
    [participant.id, processIds],
  );
  const added = processIds.filter((id) => !participant.processIds.includes(id));
  if (added.length === 0) return;
  const inserted = await onForeignKeyViolation(tx.query<{ id: string }>(linkProcesses('participants pa WHERE pa.id = $1', '$2'), [participant.id, added]), processDeletedMeanwhile);
  await refuseTaken(tx, participant, added, inserted.map((row) => row.id));
}

export async function deleteParticipant(tx: Queryable, key: ParticipantKey, scope: Scope): Promise<boolean> {
  const conditions = located(key, scope);
  const deleted = await tx.query(`DELETE FROM participants pa ${conditions.clause} RETURNING pa.id`, conditions.params);
  return deleted.length > 0;
}

/** The ids of every participant of an organization, each locked until the transaction ends. */
export async function lockOrganization(tx: Queryable, organization: Organization): Promise<string[]> {
  const rows = await tx.query<{ id: string }>(
    'SELECT id FROM participants WHERE icd = $1 AND organization_identifier = $2 ORDER BY id FOR UPDATE',
    [organization.icd, organization.organizationIdentifier],
  );
  return rows.map((row) => row.id);
}

/** Which of `ids` are service providers, each kept from deletion until the transaction ends. */
export async function existingServiceProviders(tx: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const rows = await tx.query<{ id: string }>(
    'SELECT id FROM service_providers WHERE id = ANY($1::uuid[]) ORDER BY id FOR KEY SHARE', [[...new Set(ids)]]);
  return new Set(rows.map((row) => row.id));
}

export async function serviceProviderExists(tx: Queryable, id: string): Promise<boolean> {
  const rows = await tx.query('SELECT 1 FROM service_providers WHERE id = $1 FOR KEY SHARE', [id]);
  return rows.length > 0;
}

/** Moves the participant, its contact and processes to another provider; 409 if that one has the organization. */
export async function transferParticipant(tx: Queryable, participant: LockedParticipant, targetId: string): Promise<void> {
  if (participant.serviceProviderId === targetId) throw alreadyRegistered(participant);
  await onUniqueViolation(tx.query(
    `UPDATE participants SET service_provider_id = $2, last_modification_date = ${TODAY} WHERE id = $1`,
    [participant.id, targetId],
  ), () => alreadyRegistered(participant));
}

export interface ProcessRule {
  id: string;
  /** The qualified identifier. */
  name: string;
  restricted: boolean;
  requiredIcds: string[];
  dependencies: { id: string; name: string }[];
}

/** What the participant rules need to know of a process. */
export const processRuleOf = (process: Process): ProcessRule => ({
  id: process.identifier,
  name: process.qualifiedIdentifier,
  restricted: process.restricted,
  requiredIcds: process.requiredICDs,
  dependencies: process.dependencies.map((dependency) => ({ id: dependency.identifier, name: dependency.qualifiedIdentifier })),
});
