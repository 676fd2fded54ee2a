import type { ErrorBody } from './types.js';

/** The API's own words for a failed call: its message, and the message of each field it names. */
export interface Problem {
  status: number;
  message: string;
  fields: Record<string, string>;
}

export function problemOf(status: number, body: unknown): Problem {
  const error = (typeof body === 'object' && body !== null ? body : {}) as Partial<ErrorBody>;
  const fields: Record<string, string> = {};
  for (const entry of error.errors ?? []) {
    fields[entry.field] = fields[entry.field] ? `${fields[entry.field]}; ${entry.defaultMessage}` : entry.defaultMessage;
  }
  return { status, message: error.message ?? `HTTP ${status}`, fields };
}

export function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && 'status' in value && 'fields' in value;
}
