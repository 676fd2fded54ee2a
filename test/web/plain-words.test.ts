import { describe, expect, it } from 'vitest';
import { characterWords, problemOf, waitWords } from '../../web/src/api/problem.js';
import { TEXTS, translator } from '../../web/src/i18n.js';
import { participantFieldWords } from '../../web/src/words.js';

const en = translator('en');
const nb = translator('nb');

/** An entry of the API's error body, as the validation layer makes one for a refused character. */
const refused = (code: string, character: string, field = 'organizationIdentifier') => ({
  field,
  code,
  codes: [code],
  arguments: [],
  bindingFailure: false,
  objectName: 'addParticipantForm',
  rejectedValue: `a${character}b`,
  defaultMessage: `must not contain U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}: only printable US-ASCII is allowed here`,
});

describe("the console's words (issue 48: plain words, plurals)", () => {
  it("a count takes its number's form in both languages, with one or two counts in a text", () => {
    expect(en('fieldsChanged', { count: 1 })).toBe('1 field changed');
    expect(en('fieldsChanged', { count: 33 })).toBe('33 fields changed');
    expect(en('attentionLockedUsers', { count: 1 })).toMatch(/^1 sign-in is locked/);
    expect(en('attentionLockedUsers', { count: 2 })).toMatch(/^2 sign-ins are locked/);
    expect(en('attentionHeldUp', { heldElsewhere: 1, refused: 2 })).toBe(
      '1 organization is held by another SMP and 2 were refused by the SML.',
    );
    expect(nb('attentionHeldUp', { heldElsewhere: 1, refused: 0 })).toBe(
      '1 organisasjon holdes av en annen SMP, og 0 ble avvist av SML.',
    );
    expect(nb('certificateExpiresIn', { certificate: 'X', date: 'd', days: 1 })).toBe('X utløper d, om 1 dag.');
    expect(en('importReport', { imported: 1, present: 0, refused: 0, total: 1 })).toBe(
      '1 imported, 0 already present, 0 refused, of 1 line.',
    );
  });

  it('no text of either language counts with a bare number before a plural noun', () => {
    for (const texts of Object.values(TEXTS)) {
      for (const [key, text] of Object.entries(texts))
        expect(text, key).not.toMatch(
          /\{(count|days|total|pending|attempts)\} (fields|days|lines|participants|sign-ins|changes|organizations|dager|linjer|deltakere|endringer)/,
        );
    }
  });

  it('a refused character is named in words: a space, a tab, a letter, an invisible one; in Norwegian too', () => {
    expect(
      problemOf(400, { message: 'x', errors: [refused('PrintableAscii', ' ')] }, en).fields.organizationIdentifier,
    ).toBe('Spaces are not allowed here.');
    expect(
      problemOf(400, { message: 'x', errors: [refused('PrintableAscii', ' ')] }, nb).fields.organizationIdentifier,
    ).toBe('Mellomrom er ikke tillatt her.');
    expect(
      problemOf(400, { message: 'x', errors: [refused('PrintableAscii', 'ø')] }, en).fields.organizationIdentifier,
    ).toBe('The character “ø” is not allowed here: only the letters A to Z, digits and punctuation, with no spaces.');
    expect(problemOf(400, { message: 'x', errors: [refused('XmlCharacters', '\u0001', 'name')] }, en).fields.name).toBe(
      'An invisible control character (U+0001) cannot be stored here: remove it.',
    );
    expect(characterWords(en, '\t')).toBe('A tab');
    expect(characterWords(nb, '\n')).toBe('Et linjeskift');
    expect(characterWords(en, '\u00A0')).toBe('A non-breaking space');
  });

  it("a wait in words, and an import's fields by the form's labels", () => {
    expect(waitWords(en, 900)).toBe('15 minutes');
    expect(waitWords(en, 61)).toBe('2 minutes');
    expect(waitWords(en, 1)).toBe('1 second');
    expect(waitWords(nb, 60)).toBe('1 minutt');
    expect(participantFieldWords(en, 'contact')).toBe('Contact');
    expect(participantFieldWords(en, 'contact.email')).toBe('Email');
    expect(participantFieldWords(en, 'processes[2].identifier')).toBe('Process 3');
    expect(participantFieldWords(nb, 'organizationIdentifier')).toBe('Organisasjonsnummer');
    expect(participantFieldWords(en, 'somethingElse')).toBe('somethingElse');
  });
});
