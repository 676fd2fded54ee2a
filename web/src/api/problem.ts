import { activeTranslator, type TextKey, type Translate } from '../i18n.js';
import type { ErrorBody } from './types.js';

/** The API's answer to a failed call in plain words: what went wrong, and the message of each field it names. */
export interface Problem {
  status: number;
  message: string;
  fields: Record<string, string>;
}

type Entry = NonNullable<ErrorBody['errors']>[number];

/** The API's constraint codes a reader gets in their own words; any other code keeps the API's message. */
const PLAIN: Record<string, TextKey> = {
  NotNull: 'plainRequired',
  NotEmpty: 'plainRequired',
  Email: 'plainEmail',
  Pattern: 'plainPattern',
  OneOf: 'plainOneOf',
  URL: 'plainUrl',
  UniqueElements: 'plainUnique',
  Icd: 'plainIcd',
};

/** A size's bounds are its constraint arguments after the field itself: max, then min. */
function plainSize(t: Translate, entry: Entry): string {
  const [, max, min] = entry.arguments ?? [];
  const list = (entry.codes ?? []).some((code) => /^Size\.(List|Set)$/.test(code));
  return t(list ? 'plainSizeList' : 'plainSize', { min: Number(min ?? 0), max: Number(max ?? 0) });
}

/** The character the API names (`must not contain U+0020: …`) as a reader knows it: a space, a tab, or the character itself. */
export function characterWords(t: Translate, character: string): string {
  const code = `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  if (character === '\t') return t('characterTab');
  if (character === '\n' || character === '\r' || character === '\u2028' || character === '\u2029')
    return t('characterLineBreak');
  if (character === '\u00A0' || character === '\u202F') return t('characterNoBreakSpace');
  return /\p{C}/u.test(character) ? t('characterControl', { code }) : t('characterShown', { character });
}

/** A refused character's message, in words: spaces said as such, any other character named. */
function plainCharacter(t: Translate, entry: Entry): string | undefined {
  const named = /U\+([0-9A-F]{4,6})/.exec(entry.defaultMessage);
  if (!named?.[1]) return undefined;
  const character = String.fromCodePoint(Number.parseInt(named[1], 16));
  if (character === ' ') return t('plainSpaceRefused');
  return t(entry.code === 'XmlCharacters' ? 'plainCharacterXml' : 'plainCharacterRefused', {
    character: characterWords(t, character),
  });
}

function plainMessage(t: Translate, entry: Entry): string {
  if (entry.code === 'Size' && (entry.arguments ?? []).length >= 3) return plainSize(t, entry);
  if (entry.code === 'PrintableAscii' || entry.code === 'XmlCharacters' || entry.code === 'URL') {
    const character = plainCharacter(t, entry);
    if (character) return character;
  }
  const key = entry.code ? PLAIN[entry.code] : undefined;
  return key ? t(key) : entry.defaultMessage;
}

/** An entry of a list (`requiredICDs[1]`) says which value it is about: a form shows the list as one field. */
function withValue(entry: Entry, text: string): string {
  return /\[\d+\]$/.test(entry.field) && typeof entry.rejectedValue === 'string'
    ? `“${entry.rejectedValue}”: ${text}`
    : text;
}

/** Two messages as one: sentences follow each other, the API's own phrases are separated by a semicolon. */
const joined = (first: string | undefined, next: string) =>
  first === undefined ? next : `${first}${/[.!?]$/.test(first) ? ' ' : '; '}${next}`;

/**
 * A failed call as the console shows it. A validation failure (its message names the API's form object, such
 * as `processFormDTO`) becomes "check the marked fields"; each field's messages are in plain words.
 */
export function problemOf(status: number, body: unknown, t: Translate = activeTranslator()): Problem {
  const error = (typeof body === 'object' && body !== null ? body : {}) as Partial<ErrorBody>;
  const entries = error.errors ?? [];
  const fields: Record<string, string> = {};
  for (const entry of entries) {
    const text = withValue(entry, plainMessage(t, entry));
    fields[entry.field] = joined(fields[entry.field], text);
  }
  const message = entries.length > 0 ? t('checkFields') : (error.message ?? `HTTP ${status}`);
  return { status, message, fields };
}

/** A call that got no answer at all (the service stopped, the network down): status 0, and what to do. */
export const unreachable = (t: Translate = activeTranslator()): Problem => ({
  status: 0,
  message: t('unreachable'),
  fields: {},
});

/** How long a `Retry-After` of `seconds` is, in words: whole minutes, or seconds under one. */
export function waitWords(t: Translate, seconds: number): string {
  return seconds < 60
    ? t('waitSeconds', { count: Math.max(1, Math.ceil(seconds)) })
    : t('waitMinutes', { count: Math.ceil(seconds / 60) });
}

export function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && 'status' in value && 'fields' in value;
}

/** Whether the API's field `path` is `slot` or inside it (`contact.email` in `contact`, `requiredICDs[1]` in `requiredICDs`). */
const isWithin = (path: string, slot: string) =>
  path === slot || path.startsWith(`${slot}.`) || path.startsWith(`${slot}[`);

/**
 * The messages of a form's fields (`slots`, the API's names of what the form shows): each of the API's fields goes
 * to the most specific slot it is within, so every message shows once, at its field, or among the `unplaced`.
 */
export function placeMessages(
  fields: Record<string, string>,
  slots: readonly string[],
): { at: (slot: string) => string | undefined; unplaced: Array<[string, string]> } {
  const placed = new Map<string, string[]>();
  const unplaced: Array<[string, string]> = [];
  for (const [path, message] of Object.entries(fields)) {
    const slot = slots.filter((candidate) => isWithin(path, candidate)).sort((a, b) => b.length - a.length)[0];
    if (slot === undefined) unplaced.push([path, message]);
    else placed.set(slot, [...(placed.get(slot) ?? []), message]);
  }
  return { at: (slot) => placed.get(slot)?.reduce<string | undefined>(joined, undefined), unplaced };
}

/** The problem without the messages of `name` and what is within it: the user changed that field. */
export function withoutField(problem: Problem | null, name: string): Problem | null {
  if (!problem || !name || !Object.keys(problem.fields).some((path) => isWithin(path, name))) return problem;
  const fields = Object.fromEntries(Object.entries(problem.fields).filter(([path]) => !isWithin(path, name)));
  // A refusal of fields only is over once each of them has been changed.
  return Object.keys(fields).length === 0 ? null : { ...problem, fields };
}
