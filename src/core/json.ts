/** A value whose fields may be read, each still unknown: any object but null (an array too). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

const LINE_SEPARATORS = /[\u2028\u2029]/g;

/**
 * JSON text with U+2028 and U+2029 written as escapes. Raw, they are valid JSON, but readers that end a line at
 * every Unicode line terminator (Node's readline, which the import uses, and many log tools) break a line in two.
 */
export const escapeLineSeparators = (json: string): string =>
  json.replace(LINE_SEPARATORS, (separator) => `\\u${separator.charCodeAt(0).toString(16)}`);
