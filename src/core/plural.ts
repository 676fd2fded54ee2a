/**
 * A count with its noun in the right number (`1 migration`, `2 migrations`): the one place the service's messages
 * make a plural, so none says "1 migrations". `plural` is for nouns that do not just take an `s`.
 */
export const counted = (count: number, singular: string, plural = `${singular}s`): string =>
  `${count} ${count === 1 ? singular : plural}`;

/** The verb after a count: `1 line is`, `2 lines are`. */
export const isOrAre = (count: number): string => (count === 1 ? 'is' : 'are');
