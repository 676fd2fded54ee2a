import type { Schemas } from './api/types.js';
import { isTextKey, type TextKey, type Translate } from './i18n.js';

type Entry = Schemas['ChangeEntry'];
type State = Record<string, unknown>;

const isState = (value: unknown): value is State =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const stateOf = (value: unknown): State => (isState(value) ? value : {});
const textOf = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/** The words of a resource's fields where the console has them (`fieldTitle`), else the field's own name. */
const FIELDS: Record<string, TextKey> = {
  title: 'title',
  name: 'name',
  domain: 'domain',
  alias: 'alias',
  restricted: 'restricted',
  visible: 'visible',
  processes: 'processes',
  documentTypes: 'documentTypes',
  dependencies: 'dependsOn',
  capabilities: 'capabilities',
  requiredICDs: 'requiredIcds',
  contact: 'contact',
  provider: 'provider',
  endpoints: 'endpoints',
  accessPoint: 'accessPoint',
  role: 'role',
  username: 'username',
  value: 'value',
  qualifiedIdentifier: 'identifier',
  url: 'url',
};
const fieldName = (t: Translate, field: string) => (FIELDS[field] ? t(FIELDS[field]) : field);

/** Fields every change moves on its own: they are in the full detail, not in the summary. */
const BOOKKEEPING = new Set(['identifier', 'lastModificationDate', 'registrationDate']);

/** The words a value of a list shows by: its title, name, URL or username. */
const nameOf = (item: unknown): string | undefined => {
  const state = stateOf(item);
  return textOf(state.title) ?? textOf(state.name) ?? textOf(state.url) ?? textOf(state.username);
};

/** A list of named values (processes, document types, endpoints), by the identifier (or name) of each. */
function namedList(value: unknown): Map<string, string> | undefined {
  if (!Array.isArray(value) || !value.every((item) => nameOf(item) !== undefined)) return undefined;
  return new Map(
    value.map((item) => [textOf(stateOf(item).identifier) ?? (nameOf(item) as string), nameOf(item) as string]),
  );
}

/** A value as a line shows it, cut short: the full detail has the rest. */
function shortValue(value: unknown): string {
  const text =
    value === null || value === undefined
      ? '–'
      : Array.isArray(value)
        ? value.map(shortValue).join(', ')
        : typeof value === 'object'
          ? '…'
          : String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** What the entry's identifier stands for, in words: the participant's name and number, a process's title, a lock's user. */
export function subjectOf(entry: Entry, t: Translate): string | undefined {
  const state = stateOf(entry.after ?? entry.before);
  if (entry.resource === 'participant') {
    const number =
      textOf(state.icd) && textOf(state.organizationIdentifier)
        ? `${String(state.icd)}:${String(state.organizationIdentifier)}`
        : undefined;
    return [textOf(state.name), number].filter(Boolean).join(' · ') || undefined;
  }
  if (entry.resource === 'sign-in-lock') {
    if (!textOf(state.clientAddress)) return undefined;
    return t('auditLockOf', {
      username: textOf(state.username) ?? t('everyUsername'),
      address: String(state.clientAddress),
    });
  }
  return nameOf(state) ?? textOf(state.schemeName) ?? textOf(state.value);
}

/**
 * What a change did, in words, a line each: on a create what the new resource has of its lists (its processes by
 * title), on a delete what it had, on an update each field that changed, lists as what was added and removed.
 */
export function summaryOf(entry: Entry, t: Translate): string[] {
  const [before, after] = [stateOf(entry.before), stateOf(entry.after)];
  if (entry.before === null || entry.after === null) {
    const state = entry.after === null ? before : after;
    return Object.entries(state).flatMap(([field, value]) => {
      const names = namedList(value);
      return names && names.size > 0
        ? [t('auditList', { field: fieldName(t, field), names: [...names.values()].join(', ') })]
        : [];
    });
  }
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (field) => !BOOKKEEPING.has(field),
  );
  return fields.flatMap((field) => lineOf(t, field, before[field], after[field]));
}

function lineOf(t: Translate, field: string, before: unknown, after: unknown): string[] {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  const label = fieldName(t, field);
  const [old, now] = [namedList(before ?? []), namedList(after ?? [])];
  if (old && now) {
    const added = [...now].filter(([key]) => !old.has(key)).map(([, name]) => name);
    const removed = [...old].filter(([key]) => !now.has(key)).map(([, name]) => name);
    const lines = [
      added.length > 0 ? t('auditAdded', { field: label, names: added.join(', ') }) : '',
      removed.length > 0 ? t('auditRemoved', { field: label, names: removed.join(', ') }) : '',
    ].filter(Boolean);
    return lines.length > 0 ? lines : [t('auditFieldChanged', { field: label })];
  }
  if (isState(before) || isState(after)) {
    const [oldName, newName] = [nameOf(before), nameOf(after)];
    return [
      oldName && newName && oldName !== newName
        ? t('auditFromTo', { field: label, before: oldName, after: newName })
        : t('auditFieldChanged', { field: label }),
    ];
  }
  return [t('auditFromTo', { field: label, before: shortValue(before), after: shortValue(after) })];
}

/** Who made the change: the user and their role; without one, where it came from, in words. */
export function whoOf(entry: Entry, t: Translate): string {
  if (entry.user) return `${entry.user.username} (${entry.user.role})`;
  const key = `origin${entry.origin}`;
  return isTextKey(key) ? t(key) : entry.origin;
}
