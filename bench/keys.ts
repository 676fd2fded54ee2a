/**
 * The benchmark's participants are numbered 1..N and every property is a pure function of that number,
 * written twice: in SQL for the bulk load and the pgbench scripts, in TypeScript for the load generator.
 * So a request (or a pgbench transaction) picks a random number and knows the participant's keys without
 * reading them from the database.
 */

import { NORWEGIAN_WEIGHTS, norwegianCheckDigit } from '../test/helpers/organization-numbers.js';

export const PARTICIPANT_SCHEME = 'iso6523-actorid-upis';
export const PROVIDER_COUNT = 50;

/** Participant n's organization number, in TypeScript and over an SQL integer expression. */
interface Numbering {
  number(n: number): string;
  sql(n: string): string;
}

/** The data set's 0192 numbers: valid, in a range of their own (8… and 0…), apart from those scenarios and imports add. */
const DATA_SET_LEADS = [8, 0] as const;
const norwegian: Numbering = {
  number: (n) => norwegianNumberOf(n, ...DATA_SET_LEADS),
  sql: (n) => sqlNorwegianNumber(n, ...DATA_SET_LEADS),
};
/** `base + n`: made up, whatever the scheme's rule (the data set never passes the API). */
const madeUp = (base: number): Numbering => ({
  number: (n) => String(base + n),
  sql: (n) => `(${base}::bigint + (${n}))::text`,
});

/** ICD by `(n * 7919) % 100`: mostly 0192, some other Nordic schemes; each with its own number range. */
const ICD_BANDS = [
  { below: 85, icd: '0192', numbering: norwegian },
  { below: 90, icd: '0007', numbering: madeUp(5_560_000_000) },
  { below: 94, icd: '0088', numbering: madeUp(7_080_000_000_000) },
  { below: 97, icd: '0184', numbering: madeUp(20_000_000) },
  { below: 100, icd: '0037', numbering: madeUp(10_000_000) },
] as const;
export const BENCH_ICDS = ICD_BANDS.map((band) => band.icd);

function bandOf(n: number) {
  const draw = (n * 7919) % 100;
  return ICD_BANDS.find((band) => draw < band.below) ?? ICD_BANDS[0];
}

export const icdOf = (n: number): string => bandOf(n).icd;

/**
 * For each n below 10,000,000 a valid Norwegian organization number of its own (the check digit of mod 11 with the
 * weights 3, 2, 7, 6, 5, 4, 3, 2): `first`, then n in seven digits, then the check digit; where those eight digits
 * have none, `instead` in place of `first` (its other weight gives one). Ranges with first digits of their own never
 * meet, nor the data set's (`DATA_SET_LEADS`): the participants that scenarios and imports add are registered through the API,
 * which refuses a number that breaks its rule.
 */
export function norwegianNumberOf(n: number, first: number, instead: number): string {
  for (const lead of [first, instead]) {
    const body = `${lead}${String(n).padStart(7, '0')}`;
    const check = norwegianCheckDigit(body);
    if (check !== undefined) return `${body}${check}`;
  }
  throw new Error(`no check digit for ${n} with ${first} or ${instead}`);
}

/** `norwegianNumberOf` over an SQL integer expression `n` (below 10,000,000): the same weights, digit by digit. */
function sqlNorwegianNumber(n: string, first: number, instead: number): string {
  const [leadWeight = 0, ...weights] = NORWEGIAN_WEIGHTS;
  const rest = weights
    .map((weight, index) => `(${n})::bigint / ${10 ** (weights.length - 1 - index)} % 10 * ${weight}`)
    .join(' + ');
  const check = (lead: number) => `((11 - (${lead * leadWeight} + ${rest}) % 11) % 11)`;
  const body = (lead: number) => `'${lead}' || lpad((${n})::text, 7, '0') || ${check(lead)}::text`;
  return `(CASE WHEN ${check(first)} < 10 THEN ${body(first)} ELSE ${body(instead)} END)`;
}

export const organizationOf = (n: number): string => bandOf(n).numbering.number(n);
export const providerIndexOf = (n: number): number => n % PROVIDER_COUNT;
export const qualifiedIdentifierOf = (n: number): string => `${PARTICIPANT_SCHEME}::${icdOf(n)}:${organizationOf(n)}`;
/** 1 to 4 processes. */
export const processCountOf = (n: number): number => 1 + ((n * 11) % 4);

const draw = (n: string) => `((${n})::bigint * 7919 % 100)`;

/** The same functions over an SQL integer expression `n` (a column, or a pgbench `:variable`). */
export const sqlKeys = {
  icd: (n: string) =>
    `(CASE ${ICD_BANDS.map((band) => `WHEN ${draw(n)} < ${band.below} THEN '${band.icd}'`).join(' ')} END)`,
  organization: (n: string) =>
    `(CASE ${ICD_BANDS.map((band) => `WHEN ${draw(n)} < ${band.below} THEN ${band.numbering.sql(n)}`).join(' ')} END)`,
  providerIndex: (n: string) => `((${n}) % ${PROVIDER_COUNT})`,
  processCount: (n: string) => `(1 + (${n})::bigint * 11 % 4)`,
};

const FIRST_WORDS = [
  'Nord',
  'Fjord',
  'Vest',
  'Øst',
  'Sør',
  'Berg',
  'Lia',
  'Dal',
  'Skog',
  'Sjø',
  'Havn',
  'Bakke',
  'Elve',
  'Fjell',
  'Stein',
  'Granli',
  'Solberg',
  'Lunde',
  'Haug',
  'Moen',
  'Nygård',
  'Strand',
  'Holm',
  'Vik',
  'Aas',
  'Bø',
  'Kirke',
  'Tinde',
  'Brekke',
  'Lyng',
  'Furu',
  'Bjørke',
  'Eik',
  'Ask',
  'Lind',
  'Hegg',
  'Rogn',
  'Selje',
  'Vidde',
  'Myr',
  'Tangen',
  'Odden',
  'Nesset',
  'Øya',
  'Sundet',
  'Våg',
  'Bukta',
  'Kleiva',
  'Ura',
  'Li',
];
const TRADES = [
  'Bygg',
  'Elektro',
  'Rør',
  'Transport',
  'Regnskap',
  'Consulting',
  'Eiendom',
  'Maskin',
  'Handel',
  'Data',
  'Tre',
  'Betong',
  'Maling',
  'Auto',
  'Frisør',
  'Bakeri',
  'Fisk',
  'Landbruk',
  'Entreprenør',
  'Arkitekter',
  'Advokatfirma',
  'Tannlege',
  'Legesenter',
  'Renhold',
  'Sikkerhet',
  'Media',
  'Design',
  'Invest',
  'Holding',
  'Shipping',
  'Energi',
  'Solutions',
  'Teknikk',
  'Service',
  'Drift',
  'Montasje',
  'Snekkeri',
  'Blikk',
  'Glass',
  'Kjøkken',
  'Møbler',
  'Sport',
  'Reise',
  'Helse',
  'Omsorg',
  'Barnehage',
  'Skole',
  'Kultur',
  'Hotell',
  'Kafé',
];
const FORMS = [
  'AS',
  'AS',
  'AS',
  'AS',
  'ASA',
  'ANS',
  'DA',
  'SA',
  'ENK',
  'Kommune',
  'Stiftelse',
  'BA',
  'AS',
  'AS',
  'NUF',
];
const GIVEN_NAMES = [
  'Anne',
  'Ole',
  'Kari',
  'Per',
  'Ingrid',
  'Lars',
  'Nora',
  'Jonas',
  'Sofie',
  'Erik',
  'Emma',
  'Magnus',
  'Ida',
  'Henrik',
  'Sara',
  'Jakob',
];
const FAMILY_NAMES = [
  'Hansen',
  'Johansen',
  'Olsen',
  'Larsen',
  'Andersen',
  'Pedersen',
  'Nilsen',
  'Kristiansen',
  'Jensen',
  'Karlsen',
  'Berg',
  'Haugen',
  'Hagen',
  'Eriksen',
  'Dahl',
  'Lie',
];

const sqlArray = (words: readonly string[]) => `ARRAY[${words.map((word) => `'${word}'`).join(', ')}]`;
/** A word of `words` chosen by bits `shift`.. of a multiplicative hash of `n`, so choices are independent. */
const pick = (words: readonly string[], n: string, shift: number) =>
  `(${sqlArray(words)})[1 + ((${n})::bigint * 2654435761 % 4294967296 / ${2 ** shift}) % ${words.length}]`;

/** Name, contact and dates of participant `n`, as SQL expressions. */
export const sqlParticipant = {
  name: (n: string) => `${pick(FIRST_WORDS, n, 4)} || lower(${pick(TRADES, n, 12)}) || ' ' || ${pick(FORMS, n, 20)}`,
  contactName: (n: string) => `${pick(GIVEN_NAMES, n, 8)} || ' ' || ${pick(FAMILY_NAMES, n, 16)}`,
  contactEmail: (n: string) => `'post@org' || (${n}) || '.example.no'`,
  contactPhone: (n: string) => `'+47 ' || (40000000 + (${n}) % 10000000)`,
  /** Modification dates spread over the last five years; registration before it. */
  lastModification: (n: string) => `(current_date - ((${n})::bigint * 7907 % 1826)::int)`,
  registration: (n: string) => `(current_date - ((${n})::bigint * 7907 % 1826)::int - ((${n}) % 700)::int)`,
};

/**
 * What a user types to find an organization by name (scenario 4): a trade (about 2 % of all names match)
 * or a whole word such as `fjordbygg` (about 0.04 %).
 */
export const NAME_FRAGMENTS = [
  ...TRADES.map((trade) => trade.toLowerCase()),
  ...FIRST_WORDS.slice(0, 25).map((first, index) => `${first}${TRADES[index % TRADES.length]}`.toLowerCase()),
];
