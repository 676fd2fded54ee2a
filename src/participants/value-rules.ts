/**
 * The rule of each ICD for its organization identifiers, from the Peppol Participant Identifier Schemes code list v9.7
 * (reference-data/peppol-codelists-v9.7/participant-identifier-schemes.xml): the `<validation-rules>` pattern (else the
 * `<structure>`'s, where it states one exactly), and the check digit where the list names its algorithm. An ICD the
 * table has no rule for takes any value the specification allows. docs/design/participants.md, "Identifiers",
 * says which check comes from where and which the list leaves too vague to implement.
 */
import { stdnum } from 'stdnum';

interface ValueRule {
  /** What the value is meant to be, with its article: "a Norwegian organization number". */
  name: string;
  /** Its shape in words, said when the pattern is not met: "nine digits, the last a mod 11 check digit". */
  shape: string;
  /** The code list's pattern, matched whole and without regard to case (the value is case-insensitive). */
  pattern: RegExp;
  /** The check digits, on a value that has the pattern; none where the list gives no exact algorithm. */
  check?: (value: string) => boolean;
}

const whole = (source: string) => new RegExp(`^(?:${source})$`, 'i');

/** A validator of python-stdnum's JavaScript port, as a check. */
const stdnumCheck = (country: string, number: string) => {
  const validator = stdnum[country]?.[number];
  if (!validator) throw new Error(`stdnum has no ${country}.${number}`);
  return (value: string) => validator.validate(value).isValid;
};

/** The digits of a value, every other character left out. */
const digitsOf = (value: string) => value.replace(/[^0-9]/g, '');

/** GS1's check digit (GLN, GTIN): the weights 3 and 1 from the right, the sum a multiple of 10 with the check digit. */
export function gs1CheckDigitHolds(digits: string): boolean {
  const sum = [...digits]
    .reverse()
    .reduce((total, digit, index) => total + Number(digit) * (index % 2 === 0 ? 1 : 3), 0);
  return sum % 10 === 0;
}

/** ISO 7064 MOD 97-10 (LEI; IBAN once its first four characters are moved to its end): letters count 10 to 35. */
export function mod97Holds(text: string): boolean {
  let remainder = 0;
  for (const character of text.toUpperCase()) {
    const value = Number.parseInt(character, 36);
    remainder = (remainder * (value < 10 ? 10 : 100) + value) % 97;
  }
  return remainder === 1;
}

/** Lithuania's legal entity code as the list's text says: weights 1 to 8, the remainder of 11 (below 10) is the 9th digit. */
function lithuanianCodeHolds(digits: string): boolean {
  const sum = [...digits.slice(0, 8)].reduce((total, digit, index) => total + Number(digit) * (index + 1), 0);
  return sum % 11 === Number(digits[8]);
}

const norwegianOrganizationNumber = stdnumCheck('NO', 'orgnr');
const luhnItalian = stdnumCheck('IT', 'iva');
const danishCvr = stdnumCheck('DK', 'cvr');
const finnishBusinessId = stdnumCheck('FI', 'ytunnus');
const japaneseCorporateNumber = stdnumCheck('JP', 'cn');
const icelandicKennitala = stdnumCheck('IS', 'kennitala');
const belgianEnterpriseNumber = stdnumCheck('BE', 'vat');
const frenchSiren = stdnumCheck('FR', 'siren');
const frenchSiret = stdnumCheck('FR', 'siret');
const italianFiscalCode = stdnumCheck('IT', 'codicefiscale');

const NORWEGIAN: ValueRule = {
  name: 'a Norwegian organization number',
  shape: 'nine digits, the last a mod 11 check digit',
  pattern: whole('[0-9]{9}'),
  check: norwegianOrganizationNumber,
};
const ICELANDIC: ValueRule = {
  name: 'an Icelandic kennitala',
  shape: '10 digits with a mod 11 check digit',
  pattern: whole('[0-9]{10}'),
  check: icelandicKennitala,
};
const ITALIAN_VAT: ValueRule = {
  name: 'an Italian VAT number',
  shape: 'IT and 11 digits, the last a Luhn check digit',
  pattern: whole('IT[0-9]{11}'),
  check: luhnItalian,
};
const DANISH_SE: ValueRule = {
  name: 'a Danish SE number',
  shape: 'DK and 8 digits with a mod 11 check',
  pattern: whole('DK[0-9]{8}'),
  check: (value) => danishCvr(digitsOf(value)),
};
const belgian = (first: '[01]' | '0', said: string): ValueRule => ({
  name: 'a Belgian enterprise number',
  shape: `10 digits starting with ${said}, the last two a mod 97 check`,
  pattern: whole(`${first}[0-9]{9}`),
  check: belgianEnterpriseNumber,
});
const digitsOnly = (name: string): ValueRule => ({ name, shape: 'digits only', pattern: whole('[0-9]+') });

/** The rules by ICD. */
const RULES: ReadonlyMap<string, ValueRule> = new Map<string, ValueRule>([
  [
    '0002',
    {
      name: 'a French SIREN or SIRET number',
      shape: '9 digits (SIREN) or 14 (SIRET), with Luhn check digits',
      pattern: whole('[0-9]{9}([0-9]{5})?'),
      check: (value) => (value.length === 9 ? frenchSiren(value) : frenchSiret(value)),
    },
  ],
  [
    '0007',
    {
      name: 'a Swedish organisation number',
      shape: '10 digits, the last a Luhn check digit',
      pattern: whole('[0-9]{10}'),
      check: stdnumCheck('SE', 'orgnr'),
    },
  ],
  ['0009', { name: 'a SIRET code', shape: '14 digits', pattern: whole('[0-9]{14}') }],
  [
    '0037',
    {
      name: 'a Finnish OVT code',
      shape:
        'an optional 0037, the 8-digit business ID (a hyphen before its check digit allowed), up to 5 letters or digits',
      pattern: whole('(0037)?[0-9]{7}-?[0-9][0-9A-Z]{0,5}'),
      check: (value) =>
        finnishBusinessId(
          value
            .replace(/^0037(?=[0-9]{7}-?[0-9])/, '')
            .replace('-', '')
            .slice(0, 8),
        ),
    },
  ],
  ['0060', { name: 'a D-U-N-S number', shape: 'nine digits', pattern: whole('[0-9]{9}') }],
  [
    '0088',
    {
      name: 'a GLN',
      shape: '13 digits with a GS1 check digit',
      pattern: whole('[0-9]{13}'),
      check: gs1CheckDigitHolds,
    },
  ],
  ['0096', { name: 'a Danish P number', shape: '10 digits', pattern: whole('[0-9]{10}') }],
  ['0097', { name: 'an Italian FTI code', shape: '11 to 16 digits', pattern: whole('[0-9]{11,16}') }],
  ['0106', { name: 'a Dutch KvK number', shape: '17 digits', pattern: whole('[0-9]{17}') }],
  ['0135', digitsOnly('an Italian SIA code')],
  ['0142', digitsOnly('an Italian SECETI code')],
  [
    '0151',
    {
      name: 'an Australian Business Number',
      shape: '11 digits with mod 89 check digits',
      pattern: whole('[0-9]{11}'),
      check: stdnumCheck('AU', 'abn'),
    },
  ],
  ['0158', { name: 'a Slovak IČO', shape: '8 digits', pattern: whole('[0-9]{8}') }],
  [
    '0183',
    {
      name: 'a Swiss UID',
      shape: 'CHE and 9 digits, the last a mod 11 check digit',
      pattern: whole('CHE[0-9]{9}'),
      check: stdnumCheck('CH', 'uid'),
    },
  ],
  ['0184', { name: 'a Danish DIGST number', shape: '8 digits, the first not 0', pattern: whole('[1-9][0-9]{7}') }],
  [
    '0188',
    {
      name: 'a Japanese corporate number',
      shape: '13 digits, the first a check digit',
      pattern: whole('[0-9]{13}'),
      check: japaneseCorporateNumber,
    },
  ],
  ['0190', { name: 'a Dutch OIN', shape: '20 digits', pattern: whole('[0-9]{20}') }],
  [
    '0191',
    {
      name: 'an Estonian registry code',
      shape: '8 digits starting with 1, 7, 8 or 9, the last a check digit',
      pattern: whole('[1789][0-9]{7}'),
      check: stdnumCheck('EE', 'registrikood'),
    },
  ],
  ['0192', NORWEGIAN],
  ['0193', { name: 'a UBL.BE party identifier', shape: '4 to 50 characters', pattern: whole('.{4,50}') }],
  [
    '0195',
    {
      name: 'a Singapore UEN identifier',
      shape: 'two letters, three letters, the UEN, a check letter or digit',
      pattern: whole('[a-z]{2}[a-z]{3}([0-9]{8}|[0-9]{9}|[RST][0-9]{2}[a-z]{2}[0-9]{4})[0-9a-z]'),
    },
  ],
  ['0196', ICELANDIC],
  ['0198', DANISH_SE],
  [
    '0199',
    {
      name: 'a Legal Entity Identifier (LEI)',
      shape: '18 letters or digits and 2 check digits (ISO 7064 mod 97-10)',
      pattern: whole('[A-Z0-9]{18}[0-9]{2}'),
      check: mod97Holds,
    },
  ],
  [
    '0200',
    {
      name: 'a Lithuanian legal entity code',
      shape: 'nine digits, the last a mod 11 check digit',
      pattern: whole('[0-9]{9}'),
      check: lithuanianCodeHolds,
    },
  ],
  ['0201', { name: 'an Italian office code (CUU)', shape: '6 letters or digits', pattern: whole('[0-9a-zA-Z]{6}') }],
  [
    '0204',
    {
      name: 'a German Leitweg-ID',
      shape: '2 to 12 digits, an optional part of up to 30 letters or digits, 2 check digits, joined by hyphens',
      pattern: whole('[0-9]{2,12}(-[0-9A-Z]{0,30})?-[0-9]{2}'),
    },
  ],
  ['0205', { name: 'an Italian CODDEST code', shape: '7 letters or digits', pattern: whole('[0-9A-Z]{7}') }],
  ['0208', belgian('[01]', '0 or 1')],
  [
    '0210',
    {
      name: 'an Italian fiscal code',
      shape: '16 letters or digits, or 11 digits',
      pattern: whole('[A-Z0-9]{16}|[0-9]{11}'),
    },
  ],
  ['0211', ITALIAN_VAT],
  [
    '0212',
    {
      name: 'a Finnish organization identifier',
      shape: '7 digits, a hyphen and a check digit',
      pattern: whole('[0-9]{7}-[0-9]'),
    },
  ],
  ['0213', { name: 'a Finnish VAT number', shape: 'FI and 8 digits', pattern: whole('FI[0-9]{8}') }],
  ['0215', { name: 'a Finnish net service identifier', shape: 'letters and digits only', pattern: whole('[A-Z0-9]+') }],
  [
    '0216',
    {
      name: 'a Finnish OVT code',
      shape: '0037, the 8-digit business ID, up to 5 letters or digits',
      pattern: whole('0037[0-9]{8}[0-9A-Z]{0,5}'),
    },
  ],
  ['0218', { name: 'a Latvian registration number', shape: '9 or 11 digits', pattern: whole('[0-9]{9}([0-9]{2})?') }],
  [
    '0221',
    {
      name: 'a Japanese invoice issuer number',
      shape: 'T and 13 digits, the first of them a check digit',
      pattern: whole('T[0-9]{13}'),
      check: (value) => japaneseCorporateNumber(digitsOf(value)),
    },
  ],
  [
    '0225',
    {
      name: 'a French CTC identifier',
      shape: '1 to 130 letters, digits, hyphens or underscores',
      pattern: whole('[A-Za-z0-9_-]{1,130}'),
    },
  ],
  [
    '0235',
    { name: 'a UAE tax identification number', shape: '10 digits starting with 1', pattern: whole('1[0-9]{9}') },
  ],
  ['0240', { name: 'a Luxembourg national identification number', shape: '11 digits', pattern: whole('[0-9]{11}') }],
  [
    '0242',
    {
      name: 'an OpenPeppol service provider identifier (SPIS)',
      shape:
        'the 6-digit Main ID, optionally a hyphen and a Use Case ID of 3 to 12 letters, digits or underscores, and optionally ' +
        'a dot and 3 to 24 letters, digits or - . _ ~',
      pattern: whole('[0-9]{6}(-[0-9A-Z_]{3,12}(\\.[0-9A-Z\\-\\._~]{3,24})?)?'),
    },
  ],
  ['0244', { name: 'a Nigerian tax ID', shape: '13 digits', pattern: whole('[0-9]{13}') }],
  ['0245', { name: 'a Slovak tax number (DIČ)', shape: '10 digits', pattern: whole('[0-9]{10}') }],
  [
    '0246',
    {
      name: 'a German business identification number (W-IdNr)',
      shape: 'DE and 9 digits, optionally -5 digits, optionally . and 1 to 8 letters or digits',
      pattern: whole('DE[0-9]{9}(-[0-9]{5})?(\\.[0-9A-Z]{1,8})?'),
    },
  ],
  ['0248', { name: 'an Omani VAT number', shape: 'OM and 10 digits', pattern: whole('OM[0-9]{10}') }],
  ['9901', digitsOnly('a Danish CPR number')],
  [
    '9902',
    {
      name: 'a Danish CVR number',
      shape: '8 digits, the first not 0, with a mod 11 check',
      pattern: whole('[1-9][0-9]{7}'),
      check: danishCvr,
    },
  ],
  ['9904', DANISH_SE],
  ['9906', ITALIAN_VAT],
  [
    '9907',
    {
      name: 'an Italian fiscal code',
      shape: "11 digits (a company, the last a Luhn check digit) or the 16 characters of a person's code",
      pattern: whole(
        '[0-9]{11}|[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]',
      ),
      check: (value) => (value.length === 11 ? luhnItalian(value) : italianFiscalCode(value)),
    },
  ],
  ['9908', NORWEGIAN],
  [
    '9909',
    {
      name: 'a Norwegian VAT number',
      shape: 'NO, a Norwegian organization number, MVA',
      pattern: whole('NO[0-9]{9}MVA'),
      check: (value) => norwegianOrganizationNumber(digitsOf(value)),
    },
  ],
  [
    '9910',
    {
      name: 'a Hungarian tax number',
      shape: 'HU and 8 digits, the last a check digit',
      pattern: whole('HU[0-9]{8}'),
      check: stdnumCheck('HU', 'anum'),
    },
  ],
  [
    '9912',
    {
      name: 'an EU VAT number',
      shape: 'a two-letter country code and up to 20 letters or digits',
      pattern: whole('[A-Z]{2}[A-Z0-9]{0,20}'),
    },
  ],
  [
    '9915',
    {
      name: 'an Austrian government identifier',
      shape: 'a letter, then letters or digits',
      pattern: whole('[A-Z][A-Z0-9]*'),
    },
  ],
  ['9917', ICELANDIC],
  [
    '9918',
    {
      name: 'an IBAN',
      shape: 'a country code, 2 check digits (mod 97) and 11 to 30 letters or digits',
      pattern: whole('[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}'),
      check: (value) => mod97Holds(value.slice(4) + value.slice(0, 4)),
    },
  ],
  [
    '9919',
    {
      name: 'an Austrian KUR number',
      shape: 'a letter, 3 digits, a letter, 3 digits, a letter',
      pattern: whole('[A-Z][0-9]{3}[A-Z][0-9]{3}[A-Z]'),
    },
  ],
  ['9956', belgian('0', '0')],
]);

/** The ICDs with a rule. */
export const ICDS_WITH_VALUE_RULES: readonly string[] = [...RULES.keys()];

/**
 * What is wrong with an organization identifier by its ICD's rule, in plain words ("not a Norwegian organization
 * number: the check digit is wrong"); undefined when it keeps the rule, or its ICD has none.
 */
export function valueFaultOf(icd: string, organizationIdentifier: string): string | undefined {
  const rule = RULES.get(icd);
  if (!rule) return undefined;
  if (!rule.pattern.test(organizationIdentifier)) return `not ${rule.name}: ${rule.shape}`;
  if (rule.check && !rule.check(organizationIdentifier)) return `not ${rule.name}: the check digit is wrong`;
  return undefined;
}
