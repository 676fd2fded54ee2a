import type { Schemas } from './api/types.js';

export type AddParticipantForm = Schemas['AddParticipantForm'];

export type ParsedLine = { number: number; form: AddParticipantForm } | { number: number; error: string };

const FORM_KEYS = [
  'icd',
  'organizationIdentifier',
  'organizationPartIdentifier',
  'sourceIndicator',
  'name',
  'contact',
  'deleteDate',
] as const;

/** As the API and the command-line import: a JSON null counts as an absent property. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, child]) => child !== null)
      .map(([key, child]) => [key, withoutNulls(child)]),
  );
}

/**
 * The lines of a JSON lines file as add-participant forms: the export's lines (processes named by qualified
 * identifier) or add forms. Blank lines are skipped; a line that is not a JSON object is an error of its own.
 * Everything else is left to the API, which reports what is wrong with each form.
 */
export function parseParticipantLines(text: string): ParsedLine[] {
  const lines: ParsedLine[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    const number = index + 1;
    let value: unknown;
    try {
      value = withoutNulls(JSON.parse(line));
    } catch {
      lines.push({ number, error: 'not JSON' });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      lines.push({ number, error: 'not a JSON object' });
      return;
    }
    const record = value as Record<string, unknown>;
    const form: Record<string, unknown> = {};
    for (const key of FORM_KEYS) if (record[key] !== undefined) form[key] = record[key];
    const processes = Array.isArray(record.processes) ? record.processes : [];
    form.processes = processes.map((process: unknown) => {
      const named = (process ?? {}) as { identifier?: unknown; qualifiedIdentifier?: unknown };
      return named.qualifiedIdentifier !== undefined
        ? { qualifiedIdentifier: named.qualifiedIdentifier }
        : { identifier: named.identifier };
    });
    lines.push({ number, form: form as unknown as AddParticipantForm });
  });
  return lines;
}

/**
 * A participant as one export line: the API's participant, processes named by qualified identifier and title. U+2028
 * and U+2029 are escaped, as the service's export does: readers that end a line at them would break it in two.
 */
export function exportLine(participant: Schemas['Participant']): string {
  const processes = (participant.processes ?? []).map(({ qualifiedIdentifier, title }) => ({
    qualifiedIdentifier,
    title,
  }));
  const json = JSON.stringify({ ...participant, processes });
  return `${json.replace(/[\u2028\u2029]/g, (separator) => `\\u${separator.charCodeAt(0).toString(16)}`)}\n`;
}
