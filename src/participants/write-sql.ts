/** The SQL of the participant writes: locks, inserts, process links, updates, transfers and deletes. */
import { onForeignKeyViolation, onUniqueViolation, type Queryable } from '../db/database.js';
import { ConflictError } from '../core/errors.js';
import { insertedRow } from '../db/rows.js';
import { qualifiedIdentifierOf, type Organization, type ParticipantKey } from './identifiers.js';
import {
  located,
  PARTICIPANT_RECORD_COLUMNS,
  participantColumns,
  participantIsLive,
  TODAY,
  type ParticipantRecord,
  type Scope,
} from './repository.js';
import type { Participant } from './schemas.js';

/**
 * The participant a key names, locked until the transaction ends, as it is (a change's `before`), in one statement:
 * each round trip of a write is paid by every write.
 */
export async function lockParticipant(
  tx: Queryable,
  key: ParticipantKey,
  scope: Scope,
): Promise<ParticipantRecord | undefined> {
  const conditions = located(key, scope);
  const [row] = await tx.query<ParticipantRecord>(
    `SELECT ${PARTICIPANT_RECORD_COLUMNS} FROM participants pa ${conditions.clause} FOR UPDATE`,
    conditions.params,
  );
  return row;
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
  /** What is wrong with the organization identifier by its scheme's rule; null when nothing (value-rules.ts). */
  identifierFault: string | null;
}

const alreadyRegistered = (organization: Organization) =>
  new ConflictError(`The service provider already has a participant for ${qualifiedIdentifierOf(organization)}`);

type InsertedParticipant = Omit<Participant, 'processes'> & { processIds: string[] };

/**
 * Inserts the participant with its processes in one statement; returns it as the API shows it, its process ids
 * in place of its processes. The unique key (organization, provider) turns a duplicate, even a racing one, into 409.
 */
export const insertParticipant = (
  tx: Queryable,
  record: NewParticipant,
  processIds: readonly string[],
): Promise<InsertedParticipant> => insertedRow(insertRows(tx, record, processIds, false));

/**
 * `insertParticipant`, except that the same statement inserts nothing and returns undefined while the organization has
 * a participant whose delete date has come (which holds its keys until it is expired): most registrations then need
 * no statement of their own to look for one.
 */
export const insertParticipantUnlessExpired = async (
  tx: Queryable,
  record: NewParticipant,
  processIds: readonly string[],
): Promise<InsertedParticipant | undefined> => (await insertRows(tx, record, processIds, true))[0];

/** The participant inserted, or none (`unlessExpired`, and the organization has an expired participant). */
async function insertRows(
  tx: Queryable,
  record: NewParticipant,
  processIds: readonly string[],
  unlessExpired: boolean,
): Promise<InsertedParticipant[]> {
  const rows = await onUniqueViolation(
    onForeignKeyViolation(
      tx.query<InsertedParticipant>(
        `WITH pa AS (
       INSERT INTO participants (service_provider_id, icd, organization_identifier, organization_part_identifier,
                                 source_indicator, name, registration_date, last_modification_date, delete_date,
                                 contact_name, contact_email, contact_phone, identifier_checked, identifier_fault)
       SELECT $1::uuid, $2, $3, $4, $5, $6, ${TODAY}, ${TODAY}, $7::date, $8, $9, $10, true, $13
        WHERE NOT ($12 AND EXISTS (SELECT 1 FROM participants x
                                    WHERE x.icd = $2 AND x.organization_identifier = $3 AND NOT ${participantIsLive('x')}))
       RETURNING *),
     linked AS (${linkProcesses('pa', '$11')})
     SELECT ${participantColumns(false)}, ARRAY(SELECT id::text FROM linked) AS "processIds" FROM pa`,
        [
          record.serviceProviderId,
          record.icd,
          record.organizationIdentifier,
          record.organizationPartIdentifier,
          record.sourceIndicator,
          record.name,
          record.deleteDate,
          record.contact.name,
          record.contact.email,
          record.contact.phoneNumber,
          processIds,
          unlessExpired,
          record.identifierFault,
        ],
      ),
      processDeletedMeanwhile,
    ),
    () => alreadyRegistered(record),
  );
  for (const inserted of rows) await refuseTaken(tx, record, processIds, inserted.processIds);
  return rows;
}

/**
 * Inserts many participants in one statement, in the order given, leaving out those whose provider already has
 * the organization (a participant stored before, or earlier in `records`); returns the stored ones as the API shows them.
 */
export async function insertParticipants(
  tx: Queryable,
  records: readonly NewParticipant[],
): Promise<Omit<Participant, 'processes'>[]> {
  const column = <T>(of: (record: NewParticipant) => T) => records.map(of);
  return onForeignKeyViolation(
    tx.query<Omit<Participant, 'processes'>>(
      `WITH pa AS (
       INSERT INTO participants (service_provider_id, icd, organization_identifier, organization_part_identifier,
                                 source_indicator, name, registration_date, last_modification_date, delete_date,
                                 contact_name, contact_email, contact_phone, identifier_checked, identifier_fault)
       SELECT r.provider, r.icd, r.organization, r.part, r.source, r.name, ${TODAY}, ${TODAY}, r.delete_date,
              r.contact_name, r.contact_email, r.contact_phone, true, r.fault
         FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::date[], $8::text[],
                     $9::text[], $10::text[], $11::text[]) WITH ORDINALITY
              AS r(provider, icd, organization, part, source, name, delete_date, contact_name, contact_email, contact_phone, fault,
                   position)
        ORDER BY r.position
       ON CONFLICT DO NOTHING RETURNING *)
     SELECT ${participantColumns(false)} FROM pa`,
      [
        column((r) => r.serviceProviderId),
        column((r) => r.icd),
        column((r) => r.organizationIdentifier),
        column((r) => r.organizationPartIdentifier),
        column((r) => r.sourceIndicator),
        column((r) => r.name),
        column((r) => r.deleteDate),
        column((r) => r.contact.name),
        column((r) => r.contact.email),
        column((r) => r.contact.phoneNumber),
        column((r) => r.identifierFault),
      ],
    ),
    processDeletedMeanwhile,
  );
}

/**
 * Gives many participants their processes in one statement, in the order given; returns the links stored. A link
 * left out is a process another provider already serves for the organization (the unique key decides, as one by one).
 */
export async function linkProcessesOf(
  tx: Queryable,
  links: readonly { participantId: string; processId: string }[],
): Promise<{ participantId: string; processId: string }[]> {
  return onForeignKeyViolation(
    tx.query<{ participantId: string; processId: string }>(
      `INSERT INTO participant_processes (participant_id, process_id, icd, organization_identifier)
     SELECT pa.id, l.process_id, pa.icd, pa.organization_identifier
       FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS l(participant_id, process_id, position)
       JOIN participants pa ON pa.id = l.participant_id
      ORDER BY l.position
     ON CONFLICT DO NOTHING RETURNING participant_id AS "participantId", process_id AS "processId"`,
      [links.map((link) => link.participantId), links.map((link) => link.processId)],
    ),
    processDeletedMeanwhile,
  );
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

const processDeletedMeanwhile = () =>
  new ConflictError('A process named in processes was deleted meanwhile; nothing was changed');

/** 409 naming the processes `wanted` that were not `inserted`: another provider serves them for the organization. */
async function refuseTaken(
  tx: Queryable,
  organization: Organization,
  wanted: readonly string[],
  inserted: readonly string[],
): Promise<void> {
  const taken = wanted.filter((id) => !inserted.includes(id));
  if (taken.length === 0) return;
  const names = await tx.query<{ name: string }>(
    `SELECT scheme || '::' || value AS name FROM processes WHERE id = ANY($1::uuid[]) ORDER BY scheme, value`,
    [taken],
  );
  throw new ConflictError(
    `Process ${names.map((row) => `'${row.name}'`).join(', ')} of organization ${qualifiedIdentifierOf(organization)} ` +
      'is already served by another service provider',
  );
}

/** Sets the locked participant's contact and delete date; returns it as it is now. */
export function updateParticipant(
  tx: Queryable,
  id: string,
  contact: ContactRecord,
  deleteDate: string | null,
): Promise<ParticipantRecord> {
  return updatedRecord(tx, 'contact_name = $2, contact_email = $3, contact_phone = $4, delete_date = $5', [
    id,
    contact.name,
    contact.email,
    contact.phoneNumber,
    deleteDate,
  ]);
}

/** Applies `assignments` (`$1` is the id) to the locked participant, a change of the day; returns it as it is now. */
async function updatedRecord(tx: Queryable, assignments: string, params: unknown[]): Promise<ParticipantRecord> {
  const [row] = await tx.query<ParticipantRecord>(
    `UPDATE participants pa SET ${assignments}, last_modification_date = ${TODAY} WHERE pa.id = $1 RETURNING ${PARTICIPANT_RECORD_COLUMNS}`,
    params,
  );
  if (!row) throw new Error('A participant locked for an update was not found');
  return row;
}

/** Gives the participant exactly `processIds`; 409 when another provider serves one of the added ones. */
export async function setProcesses(tx: Queryable, participant: ParticipantRecord, processIds: string[]): Promise<void> {
  await tx.query('DELETE FROM participant_processes WHERE participant_id = $1 AND NOT (process_id = ANY($2::uuid[]))', [
    participant.identifier,
    processIds,
  ]);
  const added = processIds.filter((id) => !participant.processIds.includes(id));
  if (added.length === 0) return;
  const inserted = await onForeignKeyViolation(
    tx.query<{ id: string }>(linkProcesses('participants pa WHERE pa.id = $1', '$2'), [participant.identifier, added]),
    processDeletedMeanwhile,
  );
  await refuseTaken(
    tx,
    participant,
    added,
    inserted.map((row) => row.id),
  );
}

/** Deletes the participants a key names (their processes go by cascade); returns them as they were. */
export async function deleteParticipants(
  tx: Queryable,
  key: ParticipantKey,
  scope: Scope,
): Promise<ParticipantRecord[]> {
  const conditions = located(key, scope);
  // RETURNING reads the processes in the statement's snapshot, before the cascade removes them.
  return tx.query<ParticipantRecord>(
    `DELETE FROM participants pa ${conditions.clause} RETURNING ${PARTICIPANT_RECORD_COLUMNS}`,
    conditions.params,
  );
}

/** Locks every participant of an organization until the transaction ends, in id order (so two such never deadlock). */
export async function lockOrganization(tx: Queryable, organization: Organization): Promise<void> {
  await tx.query('SELECT id FROM participants WHERE icd = $1 AND organization_identifier = $2 ORDER BY id FOR UPDATE', [
    organization.icd,
    organization.organizationIdentifier,
  ]);
}

/** Moves the participant, its contact and processes to another provider; 409 if that one has the organization. */
export async function transferParticipant(
  tx: Queryable,
  participant: ParticipantRecord,
  targetId: string,
): Promise<ParticipantRecord> {
  if (participant.provider.identifier === targetId) throw alreadyRegistered(participant);
  return onUniqueViolation(updatedRecord(tx, 'service_provider_id = $2', [participant.identifier, targetId]), () =>
    alreadyRegistered(participant),
  );
}
