/**
 * The participant write operations (add, update, transfer, delete) with every rule of the API, each inside the caller's
 * transaction: the one path for the routes, the JSON-lines import and the demo set.
 */
import { appendChange, type Actor } from '../changes/log.js';
import type { Queryable } from '../db/database.js';
import { PROCESS_REFERENCE, resolveReferences } from '../db/references.js';
import { NotFoundError, ValidationError, type FieldErrorInput } from '../core/errors.js';
import type { ContactForm, Reference } from '../core/schemas.js';
import { participantKeyOrNotFound, participantNotFound } from './identifiers.js';
import {
  deleteParticipant, getParticipant, insertParticipant, lockParticipant, processRules, purgeExpired, serviceProviderExists, setProcesses,
  transferParticipant, updateParticipant, type ContactRecord, type LockedParticipant, type Scope,
} from './repository.js';
import { processRuleErrors } from './rules.js';
import type { AddParticipantForm, Participant, UpdateParticipantForm } from './schemas.js';

export const ADD_FORM = 'addParticipantFormDTO';
export const UPDATE_FORM = 'updateParticipantFormDTO';

const contactOf = (contact: ContactForm): ContactRecord =>
  ({ name: contact.name, email: contact.email ?? null, phoneNumber: contact.phoneNumber ?? null });

/** A delete date must lie in the future: today's would remove the participant at once. */
function deleteDateErrors(deleteDate: string | undefined): Omit<FieldErrorInput, 'objectName'>[] {
  const today = new Date().toISOString().slice(0, 10);
  if (deleteDate === undefined || deleteDate > today) return [];
  return [{ field: 'deleteDate', code: 'Future', rejectedValue: deleteDate, typeName: 'LocalDate', defaultMessage: 'must be a future date' }];
}

/**
 * Resolves the form's processes and applies the participant rules; every violation, of the references,
 * the rules and the delete date, is reported at once.
 */
async function processIdsOf(
  tx: Queryable,
  objectName: string,
  form: { processes: Reference[]; deleteDate?: string },
  icd: string,
  currentIds: readonly string[],
): Promise<string[]> {
  const { ids, errors } = await resolveReferences(tx, PROCESS_REFERENCE, form.processes, 'processes');
  const rules = await processRules(tx, ids);
  const violations = [...errors, ...processRuleErrors(form.processes, rules, icd, currentIds), ...deleteDateErrors(form.deleteDate)];
  if (violations.length > 0) throw ValidationError.of(objectName, violations);
  return ids;
}

/** The participant as the API shows it, whichever provider's: what the routes answer and the change log keeps. */
export async function participantById(tx: Queryable, id: string): Promise<Participant> {
  const participant = await getParticipant(tx, { kind: 'identifier', id }, null);
  if (!participant) throw NotFoundError.instance(id);
  return participant;
}

/** Registers a participant for a service provider; returns the new participant's identifier. */
export async function registerParticipant(tx: Queryable, actor: Actor, serviceProviderId: string, form: AddParticipantForm): Promise<string> {
  const organization = { icd: form.icd, organizationIdentifier: form.organizationIdentifier.toLowerCase() };
  const processIds = await processIdsOf(tx, ADD_FORM, form, form.icd, []);
  await purgeExpired(tx, organization);
  const id = await insertParticipant(tx, {
    ...organization,
    serviceProviderId,
    organizationPartIdentifier: form.organizationPartIdentifier ?? null,
    sourceIndicator: form.sourceIndicator ?? null,
    name: form.name ?? null,
    deleteDate: form.deleteDate ?? null,
    contact: contactOf(form.contact),
  });
  await setProcesses(tx, { id, ...organization, serviceProviderId, processIds: [] }, processIds);
  const after = await participantById(tx, id);
  await appendChange(tx, actor, { resource: 'participant', identifier: after.qualifiedIdentifier, operation: 'create', before: null, after });
  return id;
}

/** The participant a path segment names within the caller's scope, locked until the transaction ends; else 404. */
async function lockOwn(tx: Queryable, segment: string, scope: Scope): Promise<LockedParticipant> {
  const participant = await lockParticipant(tx, participantKeyOrNotFound(segment), scope);
  if (!participant) throw participantNotFound(segment);
  return participant;
}

/** Replaces the participant's processes, contact and delete date; returns its identifier. */
export async function updateRegistration(tx: Queryable, actor: Actor, segment: string, scope: Scope, form: UpdateParticipantForm): Promise<string> {
  const participant = await lockOwn(tx, segment, scope);
  const processIds = await processIdsOf(tx, UPDATE_FORM, form, participant.icd, participant.processIds);
  const before = await participantById(tx, participant.id);
  await purgeExpired(tx, participant);
  await updateParticipant(tx, participant.id, contactOf(form.contact), form.deleteDate ?? null);
  await setProcesses(tx, participant, processIds);
  const after = await participantById(tx, participant.id);
  await appendChange(tx, actor, { resource: 'participant', identifier: after.qualifiedIdentifier, operation: 'update', before, after });
  return participant.id;
}

/** Moves the participant to the service provider `targetSegment` names (its UUID, any case). */
export async function transferRegistration(tx: Queryable, actor: Actor, segment: string, scope: Scope, targetSegment: string): Promise<void> {
  const participant = await lockOwn(tx, segment, scope);
  const target = targetSegment.toLowerCase();
  if (!(await serviceProviderExists(tx, target))) throw NotFoundError.instance(targetSegment);
  const before = await participantById(tx, participant.id);
  await transferParticipant(tx, participant, target);
  const after = await participantById(tx, participant.id);
  await appendChange(tx, actor, { resource: 'participant', identifier: after.qualifiedIdentifier, operation: 'transfer', before, after });
}

/** Deletes the participant the path segment names within the caller's scope; 404 when there is none. */
export async function deleteRegistration(tx: Queryable, actor: Actor, segment: string, scope: Scope): Promise<void> {
  const participant = await lockOwn(tx, segment, scope);
  const before = await participantById(tx, participant.id);
  await deleteParticipant(tx, { kind: 'identifier', id: participant.id }, null);
  await appendChange(tx, actor, { resource: 'participant', identifier: before.qualifiedIdentifier, operation: 'delete', before, after: null });
}
