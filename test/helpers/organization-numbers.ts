/**
 * Valid organization numbers for the tests and the benchmark (bench/keys.ts), computed here apart from
 * src/participants/value-rules.ts (a second implementation of each check is the tests' measure of the first).
 */

/** The weights of the Norwegian check digit (mod 11), of the eight digits before it. */
export const NORWEGIAN_WEIGHTS: readonly number[] = [3, 2, 7, 6, 5, 4, 3, 2];

/** The Norwegian check digit of eight digits (weights 3, 2, 7, 6, 5, 4, 3, 2; mod 11); undefined when there is none (10). */
export function norwegianCheckDigit(base: string): number | undefined {
  const remainder =
    [...base].reduce((sum, digit, index) => sum + Number(digit) * (NORWEGIAN_WEIGHTS[index] as number), 0) % 11;
  const check = (11 - remainder) % 11;
  return check === 10 ? undefined : check;
}

/**
 * The valid Norwegian organization number that starts with `base` (eight digits); when those eight have no check
 * digit, the next eight digits up that have one.
 */
export function norwegianNumber(base: string | number): string {
  let start = Number(base);
  for (;;) {
    const digits = String(start % 100_000_000).padStart(8, '0');
    const check = norwegianCheckDigit(digits);
    if (check !== undefined) return `${digits}${check}`;
    start += 1;
  }
}

/** `base` (twelve digits) with its GS1 check digit: a GLN. */
export function gln(base: string): string {
  const sum = [...base].reverse().reduce((total, digit, index) => total + Number(digit) * (index % 2 === 0 ? 3 : 1), 0);
  return `${base}${(10 - (sum % 10)) % 10}`;
}

/** `base` with its Luhn check digit (a Swedish organisation number from nine digits, a SIREN from eight). */
export function withLuhnDigit(base: string): string {
  const sum = [...base].reverse().reduce((total, digit, index) => {
    const doubled = Number(digit) * (index % 2 === 0 ? 2 : 1);
    return total + (doubled > 9 ? doubled - 9 : doubled);
  }, 0);
  return `${base}${(10 - (sum % 10)) % 10}`;
}

/** A Finnish business ID (Y-tunnus, ICD 0037's body) from seven digits: weights 7, 9, 10, 5, 8, 4, 2, mod 11; undefined when there is none. */
function finnishBusinessId(base: string): string | undefined {
  const weights = [7, 9, 10, 5, 8, 4, 2];
  const remainder = [...base].reduce((sum, digit, index) => sum + Number(digit) * (weights[index] as number), 0) % 11;
  if (remainder === 1) return undefined;
  return `${base}${remainder === 0 ? 0 : 11 - remainder}`;
}

let nextFinnish = Math.floor(Math.random() * 5_000_000);

/** A valid Finnish business ID no other call returns. */
export function uniqueFinnishBusinessId(): string {
  for (;;) {
    const id = finnishBusinessId(String(nextFinnish++ % 10_000_000).padStart(7, '0'));
    if (id !== undefined) return id;
  }
}

// Where this worker's numbers start: another worker's tests use other databases, so only a worker's own must differ.
let next = Math.floor(Math.random() * 50_000_000);

/** A valid nine-digit Norwegian organization number no other call returns. */
export function uniqueNorwegianNumber(): string {
  const number = norwegianNumber(next);
  next = Number(number.slice(0, 8)) + 1;
  return number;
}

const BASE_LENGTHS: Readonly<Record<string, number>> = { '0192': 8, '0007': 9, '0088': 12 };

/**
 * A valid number of `icd` (0192, 0007 or 0088) that starts with `seed`'s digits but its last and ends, before its
 * check digit, with that last digit: seeds that differ make numbers that differ ('770', '771': 7700…0x, 7700…1x).
 */
export function organizationNumberFor(icd: string, seed: string): string {
  const length = BASE_LENGTHS[icd];
  if (length === undefined) throw new Error(`no test numbers for ICD ${icd}`);
  const base = seed.slice(0, -1).padEnd(length - 1, '0') + seed.slice(-1);
  if (icd === '0007') return withLuhnDigit(base);
  if (icd === '0088') return gln(base);
  // Of ten values of the digit before the last, at most one leaves the eight digits without a check digit.
  for (const digit of '0123456789') {
    const tried = base.slice(0, -2) + digit + base.slice(-1);
    if (norwegianCheckDigit(tried) !== undefined) return `${tried}${norwegianCheckDigit(tried)}`;
  }
  throw new Error('unreachable: some digit gives a check digit');
}
