import type { Queryable } from '../db/database.js';
import { PROCESS_REFERENCE, resolveReferences } from '../db/references.js';
import { ValidationError, type FieldErrorInput } from '../core/errors.js';
import type { ContactForm, Reference } from '../core/schemas.js';
import { insertParticipant, processRules, purgeExpired, setProcesses, type ContactRecord } from './repository.js';
import { processRuleErrors } from './rules.js';
import type { AddParticipantForm } from './schemas.js';

export const ADD_FORM = 'addParticipantFormDTO';

export const contactOf = (contact: ContactForm): ContactRecord =>
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
export async function processIdsOf(
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

/**
 * Registers a participant for a service provider with every rule of the API: the one path for the add
 * operation, the import of the command line and the demo set. Returns the new participant's identifier.
 */
export async function registerParticipant(tx: Queryable, serviceProviderId: string, form: AddParticipantForm): Promise<string> {
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
  return id;
}
