import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt with N=2^15, r=8, p=1: about 32 MiB and tens of milliseconds per check, by design. */
const COST = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } satisfies ScryptOptions;
const KEY_LENGTH = 32;

/**
 * The N of new hashes: the service's always, and a cheaper one only where the test suite sets it (its thousands of
 * sign-ins would otherwise spend minutes of both cores in scrypt). Each hash names its own N, so a check costs what
 * its hash was made with.
 */
let hashN: number = COST.N;
let noPasswordHash = hashOfNoPassword();

/** For the test suite alone: new hashes (and the unknown users' check) at `n`, or at the service's N again. */
export function setHashCostForTests(n: number = COST.N): void {
  hashN = n;
  noPasswordHash = hashOfNoPassword();
}

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$salt$key`, salt and key in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { ...COST, N: hashN });
  return ['scrypt', hashN, COST.r, COST.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [algorithm, n, r, p, salt, key] = stored.split('$');
  if (algorithm !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: COST.maxmem,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash no password matches, checked for unknown users so that they cost as much as a wrong password. */
export const unknownUserHash = (): string => noPasswordHash;

function hashOfNoPassword(): string {
  return `scrypt$${hashN}$${COST.r}$${COST.p}$${randomBytes(16).toString('base64')}$${randomBytes(KEY_LENGTH).toString('base64')}`;
}
