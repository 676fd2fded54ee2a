import { dictionary } from '@zxcvbn-ts/language-common';
import { usernameKey } from '../core/username.js';

// zxcvbn-ts's list of the commonest passwords (about 49,000, lower case), from leaked password sets.
const COMMON_PASSWORDS = new Set(dictionary['passwords-common']);

/**
 * Why a password must not be set for this user, or undefined when it may. Its length is the schema's (and the
 * settings') rule; these are the ones a length does not catch.
 */
export function passwordProblem(password: string, username: string): string | undefined {
  if (usernameKey(password) === usernameKey(username)) return 'must not be the username';
  if (/^(.)\1*$/su.test(password)) return 'must not be one character repeated';
  if (COMMON_PASSWORDS.has(password.toLowerCase())) return 'is one of the commonest passwords; choose another';
  return undefined;
}
