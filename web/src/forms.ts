import type { Schemas } from './api/types.js';

export interface ContactValues {
  name: string;
  email: string;
  phoneNumber: string;
}

/**
 * An organization number as typed, without its blanks: the national registers print them in groups (`921 000 049`),
 * and the API takes none.
 */
export const organizationNumberOf = (typed: string): string => typed.replace(/\s+/g, '');

/** The contact as the API takes it: empty optional fields left out rather than sent as "" (an invalid email). */
export function contactForm(values: ContactValues): Schemas['ContactForm'] {
  return {
    name: values.name.trim(),
    ...(values.email.trim() ? { email: values.email.trim() } : {}),
    ...(values.phoneNumber.trim() ? { phoneNumber: values.phoneNumber.trim() } : {}),
  };
}

/**
 * The API's messages for the processes of a form (`processes[2]`, `processes[2].identifier`) by the process
 * identifier the form sent at that index, so each message shows next to the process it concerns.
 */
export function processMessages(fields: Record<string, string>, sent: readonly string[]): Record<string, string> {
  const messages: Record<string, string> = {};
  for (const [field, message] of Object.entries(fields)) {
    const identifier = sentProcessOf(field, sent);
    if (identifier) messages[identifier] = messages[identifier] ? `${messages[identifier]}; ${message}` : message;
  }
  return messages;
}

/** The process identifier sent at the index a field names (`processes[2].identifier`: the third), if any. */
function sentProcessOf(field: string, sent: readonly string[]): string | undefined {
  const match = /^processes\[(\d+)\]/.exec(field);
  return match ? sent[Number(match[1])] : undefined;
}

/** The messages that `processMessages` does not put at a sent process: the form's other fields, the list itself. */
export function otherMessages(fields: Record<string, string>, sent: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).filter(([field]) => !sentProcessOf(field, sent)));
}
