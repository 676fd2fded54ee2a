import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { valueFaultOf } from '../../src/participants/value-rules.js';
import { gln, norwegianNumber, withLuhnDigit } from '../helpers/organization-numbers.js';

/** Every value that differs from `value` in exactly one digit. */
function singleDigitChanges(value: string): string[] {
  return [...value].flatMap((character, index) =>
    /[0-9]/.test(character)
      ? [...'0123456789']
          .filter((digit) => digit !== character)
          .map((digit) => value.slice(0, index) + digit + value.slice(index + 1))
      : [],
  );
}

const digits = (length: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: length, maxLength: length });

describe("organization identifiers by their scheme's rule", () => {
  it.each([
    ['0192', '923609016'],
    ['0192', '974760673'],
    ['0088', '1548079098355'],
    ['0007', '2120000787'],
    ['0002', '784301772'],
    ['0002', '78430177200025'],
    ['0208', '0899965307'],
    ['0199', '5493001kjtiigc8y1r12'],
    ['0191', '10137025'],
    ['0200', '111963319'],
    ['0151', '51824753556'],
    ['0183', 'che116281710'],
    ['9918', 'no9386011117947'],
    ['9909', 'no995525828mva'],
    ['0242', '123456'],
    ['0242', '123456-mls'],
    ['0242', '123456-MLS.v1_x~y'],
    ['0184', '12345678'],
    ['0060', '812810734'],
    ['9915', 'b'],
  ])('%s:%s keeps its rule', (icd, value) => {
    expect(valueFaultOf(icd, value)).toBeUndefined();
  });

  it.each([
    ['0192', '923609017', 'not a Norwegian organization number: the check digit is wrong'],
    ['0192', '92360901', 'not a Norwegian organization number: nine digits, the last a mod 11 check digit'],
    ['0192', '923 609 016', 'not a Norwegian organization number: nine digits, the last a mod 11 check digit'],
    ['0192', 'status', 'not a Norwegian organization number: nine digits, the last a mod 11 check digit'],
    ['0088', '1548079098356', 'not a GLN: the check digit is wrong'],
    ['0088', '154807909835', 'not a GLN: 13 digits with a GS1 check digit'],
    ['0007', '2120000788', 'not a Swedish organisation number: the check digit is wrong'],
    ['0208', '0899965308', 'not a Belgian enterprise number: the check digit is wrong'],
    [
      '0208',
      '2899965307',
      'not a Belgian enterprise number: 10 digits starting with 0 or 1, the last two a mod 97 check',
    ],
    ['0184', '02345678', 'not a Danish DIGST number: 8 digits, the first not 0'],
  ])('%s:%s is refused: %s', (icd, value, fault) => {
    expect(valueFaultOf(icd, value)).toBe(fault);
  });

  it.each([
    '12345',
    '1234567',
    '123456-ml',
    '123456-abcdefghijklm',
    '123456-mls.ab',
    '123456-mls.a/b',
    '123456.mls',
    'abcdef',
  ])('0242:%s is not an SPIS identifier', (value) => {
    expect(valueFaultOf('0242', value)).toMatch(
      /^not an OpenPeppol service provider identifier \(SPIS\): the 6-digit Main ID/,
    );
  });

  it('an ICD without a rule takes any value', () => {
    expect(valueFaultOf('9922', 'anything at all')).toBeUndefined();
  });

  const properties: Array<[string, string, fc.Arbitrary<string>]> = [
    ['0192', 'a Norwegian organization number', digits(8).map(norwegianNumber)],
    ['0088', 'a GLN', digits(12).map(gln)],
    ['0007', 'a Swedish organisation number', digits(9).map(withLuhnDigit)],
  ];
  it.each(properties)(
    '%s: each generated value (%s) passes, and each change of one digit fails',
    (icd, _name, valid) => {
      fc.assert(
        fc.property(valid, (value) => {
          expect(valueFaultOf(icd, value)).toBeUndefined();
          for (const changed of singleDigitChanges(value))
            expect(valueFaultOf(icd, changed), changed).toMatch(/the check digit is wrong$/);
        }),
        { numRuns: 200 },
      );
    },
  );
});
