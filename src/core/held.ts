/**
 * The one answer of a source held in memory that cannot answer now: not loaded yet, a change heard but not read yet,
 * a row missing. Whoever asks checks it once and goes to the database (or loads) instead; every other answer is the
 * held state's, "none" included.
 */
export const NOT_HELD: unique symbol = Symbol('not held');
export type NotHeld = typeof NOT_HELD;
