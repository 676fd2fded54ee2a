import type { Role } from './api/types.js';
import type { TextKey, Translate } from './i18n.js';

/** The fields of a participant's add form by the API's names, as the form labels them. */
const PARTICIPANT_FIELDS: Readonly<Record<string, TextKey>> = {
  icd: 'icd',
  organizationIdentifier: 'organizationNumber',
  organizationPartIdentifier: 'organizationPart',
  name: 'organizationName',
  contact: 'contact',
  'contact.name': 'contactName',
  'contact.email': 'email',
  'contact.phoneNumber': 'phone',
  processes: 'processes',
  sourceIndicator: 'sourceIndicator',
  deleteDate: 'deleteDate',
};

/**
 * An API field of a participant (`contact.email`, `processes[2].identifier`) in the form's words: "Email",
 * "Process 3"; a field the form does not name keeps the API's name.
 */
export function participantFieldWords(t: Translate, field: string): string {
  const process = /^processes\[(\d+)\]/.exec(field);
  if (process) return t('processNumber', { number: Number(process[1]) + 1 });
  const key = PARTICIPANT_FIELDS[field];
  return key ? t(key) : field;
}

/** A role (`SERVICE_PROVIDER`) as people say it, in the reader's language. */
export const roleName = (t: Translate, role: Role): string => t(`role${role}`);
