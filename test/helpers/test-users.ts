import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hashPassword, setHashCostForTests } from '../../src/users/password.js';

/** The users every test app has, one of each role; each signs in with `passwordOf(username)`. */
export const TEST_USERNAMES = ['admin', 'authority', 'provider-one', 'provider-two', 'ap-provider'] as const;
export type TestUsername = (typeof TEST_USERNAMES)[number];

export const passwordOf = (username: string) => `${username}-secret-password`;

/**
 * The N of the suite's scrypt hashes (the service's is 2^15): 32 times cheaper, the same check. Thousands of sign-ins
 * at the service's cost took minutes of both cores; only the test of a check's cost (sign-in-throttle) uses that one.
 */
export const TEST_HASH_N = 2 ** 10;

/** Makes new hashes, and the unknown users' check, cost TEST_HASH_N: in each test file and in the global set-up. */
export const useTestHashCost = () => setHashCostForTests(TEST_HASH_N);

/** Their password hashes, made once per run by the suite's global set-up: scrypt is slow by design. */
const HASHES = join(import.meta.dirname, '..', '..', 'test-output', 'test-user-hashes.json');

export async function prepareTestUserHashes(): Promise<void> {
  const hashes = Object.fromEntries(
    await Promise.all(TEST_USERNAMES.map(async (name) => [name, await hashPassword(passwordOf(name))])),
  );
  await writeFile(HASHES, JSON.stringify(hashes));
}

let hashes: Record<TestUsername, string> | undefined;

export function passwordHashOf(username: TestUsername): string {
  hashes ??= JSON.parse(readFileSync(HASHES, 'utf8')) as Record<TestUsername, string>;
  return hashes[username];
}
