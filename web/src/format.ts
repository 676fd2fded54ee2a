/** One line of what a change did: a field's path and its value before and after (undefined: absent). */
export interface FieldChange {
  path: string;
  before?: string;
  after?: string;
}

/** Leaves of a JSON value by dotted path (`contact.email`, `processes[0].title`); an empty object or array is one leaf. */
function leaves(value: unknown, path = '', into = new Map<string, string>()): Map<string, string> {
  if (Array.isArray(value) && value.length > 0) value.forEach((item, index) => leaves(item, `${path}[${index}]`, into));
  else if (typeof value === 'object' && value !== null && Object.keys(value).length > 0) {
    for (const [key, item] of Object.entries(value)) leaves(item, path ? `${path}.${key}` : key, into);
  } else if (path) into.set(path, value === null ? 'null' : typeof value === 'string' ? value : JSON.stringify(value));
  return into;
}

/** The fields a change touched, in the order the resource lists them: every field on a create or a delete. */
export function fieldChanges(before: unknown, after: unknown): FieldChange[] {
  const [old, now] = [leaves(before), leaves(after)];
  const paths = [...new Set([...old.keys(), ...now.keys()])];
  return paths
    .filter((path) => old.get(path) !== now.get(path))
    .map((path) => ({ path, before: old.get(path), after: now.get(path) }));
}

/** A `datetime-local` input's value (the user's local time) as the API's date-time; empty stays absent. */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? undefined : time.toISOString();
}

/** An age in whole units a reader takes in at a glance: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function age(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  if (whole < 60) return `${whole} s`;
  if (whole < 3600) return `${Math.floor(whole / 60)} min`;
  if (whole < 86_400) return `${Math.floor(whole / 3600)} h ${Math.floor((whole % 3600) / 60)} min`;
  return `${Math.floor(whole / 86_400)} d ${Math.floor((whole % 86_400) / 3600)} h`;
}

/** A timestamp in the reader's language and time zone, to the second. */
export function when(iso: string, language: string): string {
  return new Date(iso).toLocaleString(language === 'nb' ? 'nb-NO' : 'en-GB', {
    dateStyle: 'medium',
    timeStyle: 'medium',
  });
}

/** The API's date-time as a `datetime-local` input's value, in the user's local time (to the second). */
export function isoToLocal(iso: string | undefined): string {
  if (!iso) return '';
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return '';
  const two = (value: number) => String(value).padStart(2, '0');
  return `${time.getFullYear()}-${two(time.getMonth() + 1)}-${two(time.getDate())}T${two(time.getHours())}:${two(time.getMinutes())}:${two(time.getSeconds())}`;
}

/** A day (`YYYY-MM-DD`, UTC) in the reader's language. */
export function day(date: string, language: string): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString(language === 'nb' ? 'nb-NO' : 'en-GB', {
    timeZone: 'UTC',
    dateStyle: 'medium',
  });
}
