import { asciiLowerCase } from './ascii-case.js';

/**
 * The one identity of a username, the same in JavaScript and in SQL: ASCII letters folded to lower case and
 * nothing else changed. PostgreSQL's `lower()` follows the database's locale (it folds `İ` to `i` under C.UTF-8,
 * `I` to `ı` under a Turkish one); `lower(... COLLATE "C")` folds exactly A-Z, as this does, on every database.
 */
export const usernameKey = asciiLowerCase;

/** Letters, digits and `._@-` of ASCII: no character of a new username can pass for another. */
export const USERNAME_PATTERN = '^[A-Za-z0-9._@-]*$';
/** No username is longer: a sign-in with a longer one is refused before any check (users/credentials.ts). */
export const MAX_USERNAME_LENGTH = 100;

/** Why a new username is refused (a setting, the command line: the API's schema says the same), or undefined. */
export function usernameProblem(username: string): string | undefined {
  if (username.length > MAX_USERNAME_LENGTH) return `may have at most ${MAX_USERNAME_LENGTH} characters`;
  return username !== '' && new RegExp(USERNAME_PATTERN).test(username)
    ? undefined
    : 'may have only ASCII letters, digits and . _ @ -';
}
