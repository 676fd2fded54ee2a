import { describe, expect, it } from 'vitest';
import type { Schemas } from '../../web/src/api/types.js';
import { placeMessages, problemOf, withoutField } from '../../web/src/api/problem.js';
import { warningOf } from '../../web/src/api/warning.js';
import { age, fieldChanges, localToIso } from '../../web/src/format.js';
import { certificateExpiry, expiryOf } from '../../web/src/certificates.js';
import { contactForm, organizationNumberOf, otherMessages, processMessages } from '../../web/src/forms.js';
import { TEXTS, translator } from '../../web/src/i18n.js';
import { exportLine, parseParticipantLines } from '../../web/src/jsonl.js';
import { receivableDocumentTypes } from '../../web/src/receivable.js';
import { hintBlocks, hintText, processHint } from '../../web/src/rules.js';
import { base64Der, testCertificate } from '../helpers/certificates.js';

type Process = Schemas['Process'];

const summary = (identifier: string, title: string) => ({
  identifier,
  title,
  qualifiedIdentifier: `s::${title}`,
  restricted: false,
  visible: true,
  removedFrom: null,
});
function process(overrides: Partial<Process> = {}): Process {
  return {
    identifier: 'p-1',
    qualifiedIdentifier: 'cenbii-procid-ubl::urn:p1',
    domain: 'billing',
    title: 'Reminder',
    alias: null,
    restricted: false,
    visible: true,
    removedFrom: null,
    capabilities: [],
    documentTypes: [],
    dependencies: [],
    requiredICDs: [],
    ...overrides,
  };
}
const en = translator('en');

describe("the process-rule hints of the participant form (the API's rules, shown before submit)", () => {
  it('a free process can be added', () => {
    const hint = processHint(process(), '0192', new Set());
    expect(hintBlocks(hint)).toBe(false);
    expect(hintText(en, hint)).toBe('Can be added.');
  });

  it("names the required ICDs when the participant's is not among them, and nothing when it is", () => {
    const needsNorway = process({ requiredICDs: ['0192', '9908'] });
    expect(hintText(en, processHint(needsNorway, '0007', new Set()))).toBe('Needs one of the ICDs 0192, 9908.');
    expect(hintBlocks(processHint(needsNorway, '0192', new Set()))).toBe(false);
  });

  it('names the dependencies not chosen, and clears once they are', () => {
    const dependent = process({ dependencies: [summary('billing', 'Billing'), summary('ordering', 'Ordering')] });
    expect(hintText(en, processHint(dependent, '0192', new Set(['billing'])))).toBe('Also needs: Ordering.');
    expect(hintBlocks(processHint(dependent, '0192', new Set(['billing', 'ordering'])))).toBe(false);
  });

  it('a restricted process cannot be newly taken, but one the participant already has is kept without a warning', () => {
    const restricted = process({ restricted: true, requiredICDs: ['0192'] });
    expect(hintText(en, processHint(restricted, '0007', new Set()))).toBe(
      'Closed to new participants by the registry authority; ask the authority to open it if you need it. Needs one of the ICDs 0192.',
    );
    expect(hintBlocks(processHint(restricted, '0007', new Set(['p-1']), new Set(['p-1'])))).toBe(false);
  });

  it('speaks Norwegian bokmål too', () => {
    expect(hintText(translator('nb'), processHint(process({ requiredICDs: ['0192'] }), '0007', new Set()))).toBe(
      'Krever en av ICD-ene 0192.',
    );
  });
});

describe('forms', () => {
  it('leaves out empty optional contact fields instead of sending "" (which the API refuses as an email)', () => {
    expect(contactForm({ name: ' Kari ', email: '', phoneNumber: ' ' })).toEqual({ name: 'Kari' });
    expect(contactForm({ name: 'Kari', email: 'kari@x.example', phoneNumber: '+47 1' })).toEqual({
      name: 'Kari',
      email: 'kari@x.example',
      phoneNumber: '+47 1',
    });
  });

  it("puts the API's messages about processes[i] next to the process sent at that index", () => {
    const fields = {
      'processes[1]': 'is restricted',
      'processes[1].identifier': 'unknown',
      'contact.email': 'bad',
      'processes[5]': 'out of range',
    };
    expect(processMessages(fields, ['a', 'b'])).toEqual({ b: 'is restricted; unknown' });
  });

  it("keeps the messages of sent processes apart from the others, the list's own and an index not sent included", () => {
    const fields = {
      'processes[1]': 'is restricted',
      processes: 'too many',
      'processes[5]': 'out of range',
      'contact.email': 'bad',
    };
    expect(otherMessages(fields, ['a', 'b'])).toEqual({
      processes: 'too many',
      'processes[5]': 'out of range',
      'contact.email': 'bad',
    });
  });

  const entry = (field: string, code: string, defaultMessage: string, extra: object = {}) => ({
    objectName: 'processFormDTO',
    field,
    code,
    defaultMessage,
    rejectedValue: null,
    bindingFailure: false,
    codes: [`${code}.processFormDTO.${field}`, `${code}.${field}`, `${code}.String`, code],
    arguments: [{ code: field }],
    ...extra,
  });

  it("reads the common error body in plain words: no form object named, each field's messages, a list entry with its value", () => {
    const body = {
      message: "Validation failed for object='processFormDTO'. Error count: 4",
      errors: [
        entry('contact.email', 'Email', 'must be a well-formed email address'),
        entry('contact.email', 'Size', 'size must be between 0 and 254', {
          arguments: [{ code: 'contact.email' }, 254, 0],
        }),
        entry('requiredICDs[1]', 'OneOf', 'must be one of the allowed values', { rejectedValue: '9999' }),
        entry('processes[0]', 'Restricted', "process 'x' is restricted (deprecated) and cannot be added"),
      ],
    };
    expect(problemOf(400, body, en)).toEqual({
      status: 400,
      message: 'Nothing was saved: check the marked fields.',
      fields: {
        'contact.email': 'Not an email address (name@example.com). Must be 0 to 254 characters long.',
        'requiredICDs[1]': '“9999”: Not one of the allowed values.',
        'processes[0]': "process 'x' is restricted (deprecated) and cannot be added",
      },
    });
    const list = entry('endpoints', 'Size', 'size must be between 1 and 20', {
      codes: ['Size.List'],
      arguments: [{}, 20, 1],
    });
    expect(problemOf(400, { errors: [list] }, translator('nb')).fields).toEqual({
      endpoints: 'Må ha 1 til 20 oppføringer.',
    });
    // Any other refusal keeps the API's own message (409s name things by their titles).
    expect(
      problemOf(409, { message: "The service provider 'Provider One' is still used by 1 participant(s)" }, en).message,
    ).toBe("The service provider 'Provider One' is still used by 1 participant(s)");
    expect(problemOf(502, 'gateway', en)).toEqual({ status: 502, message: 'HTTP 502', fields: {} });
  });

  it('places each message at the most specific field a form shows, every index of a list at the list, the rest apart', () => {
    const fields = {
      'requiredICDs[1]': 'a',
      'requiredICDs[2]': 'b',
      contact: 'c',
      'contact.email': 'd',
      'endpoints[0].url': 'e',
      'endpoints[1].certificate': 'f',
      title: 'g',
    };
    const { at, unplaced } = placeMessages(fields, [
      'requiredICDs',
      'contact',
      'contact.email',
      'endpoints[0].url',
      'title',
    ]);
    expect([at('requiredICDs'), at('contact'), at('contact.email'), at('endpoints[0].url'), at('title')]).toEqual([
      'a; b',
      'c',
      'd',
      'e',
      'g',
    ]);
    expect(unplaced).toEqual([['endpoints[1].certificate', 'f']]);
  });

  it('forgets the messages of a field the user changes, and the whole refusal once no field message is left', () => {
    const problem = { status: 400, message: 'm', fields: { 'requiredICDs[1]': 'a', title: 'b' } };
    expect(withoutField(problem, 'requiredICDs')).toEqual({ status: 400, message: 'm', fields: { title: 'b' } });
    expect(withoutField(problem, 'processFilter')).toBe(problem);
    expect(withoutField(withoutField(problem, 'requiredICDs'), 'title')).toBeNull();
  });
});

describe('an organization number as typed', () => {
  it('loses the blanks the national registers print it with, and only them', () => {
    expect(organizationNumberOf(' 921 000 049 ')).toBe('921000049');
    expect(organizationNumberOf('921\u00a0000\t049')).toBe('921000049');
    expect(organizationNumberOf('NO921000049MVA')).toBe('NO921000049MVA');
  });
});

describe('the JSON lines import and export', () => {
  it('turns export lines and add forms into add forms, skips blank lines, reports lines that are not JSON objects by number', () => {
    const exported = {
      identifier: 'u',
      qualifiedIdentifier: 'q',
      icd: '0192',
      organizationIdentifier: '910000004',
      organizationPartIdentifier: null,
      name: 'Demo',
      contact: { name: 'Ola', email: null, phoneNumber: null },
      provider: { identifier: 'x', title: 'P' },
      processes: [{ qualifiedIdentifier: 'cenbii-procid-ubl::urn:b', title: 'Billing' }],
      registrationDate: '2026-01-01',
    };
    const text = [
      JSON.stringify(exported),
      '',
      '{not json',
      '[1,2]',
      JSON.stringify({
        icd: '0007',
        organizationIdentifier: '5560000001',
        contact: { name: 'A' },
        processes: [{ identifier: 'id-1' }],
      }),
    ].join('\r\n');
    expect(parseParticipantLines(text)).toEqual([
      {
        number: 1,
        form: {
          icd: '0192',
          organizationIdentifier: '910000004',
          name: 'Demo',
          contact: { name: 'Ola' },
          processes: [{ qualifiedIdentifier: 'cenbii-procid-ubl::urn:b' }],
        },
      },
      { number: 3, error: 'not JSON' },
      { number: 4, error: 'not a JSON object' },
      {
        number: 5,
        form: {
          icd: '0007',
          organizationIdentifier: '5560000001',
          contact: { name: 'A' },
          processes: [{ identifier: 'id-1' }],
        },
      },
    ]);
  });

  it('an exported line imports again as the same participant', () => {
    const participant = {
      identifier: 'u',
      qualifiedIdentifier: 'iso6523-actorid-upis::0192:910000004',
      icd: '0192',
      organizationIdentifier: '910000004',
      organizationPartIdentifier: null,
      sourceIndicator: null,
      name: 'N',
      registrationDate: '2026-01-01',
      lastModificationDate: '2026-01-02',
      deleteDate: null,
      contact: { name: 'C', email: 'c@x.example', phoneNumber: null },
      provider: { identifier: 'p', title: 'P' },
      processes: [{ ...process(), qualifiedIdentifier: 'cenbii-procid-ubl::urn:p1' }],
    } as Schemas['Participant'];
    const line = exportLine(participant);
    expect(line.endsWith('\n')).toBe(true);
    expect(JSON.parse(line).processes).toEqual([
      { qualifiedIdentifier: 'cenbii-procid-ubl::urn:p1', title: 'Reminder' },
    ]);
    expect(parseParticipantLines(line)).toEqual([
      {
        number: 1,
        form: {
          icd: '0192',
          organizationIdentifier: '910000004',
          name: 'N',
          contact: { name: 'C', email: 'c@x.example' },
          processes: [{ qualifiedIdentifier: 'cenbii-procid-ubl::urn:p1' }],
        },
      },
    ]);
  });

  it('an exported line stays one line for readers that end lines at U+2028 and U+2029', () => {
    const name = 'Nord\u2028Syd\u2029AS';
    const participant = {
      identifier: 'u',
      qualifiedIdentifier: 'iso6523-actorid-upis::0192:910000004',
      icd: '0192',
      organizationIdentifier: '910000004',
      name,
      contact: { name, email: null, phoneNumber: null },
      provider: { identifier: 'p', title: 'P' },
      processes: [],
    } as unknown as Schemas['Participant'];
    const line = exportLine(participant);
    expect(line).not.toMatch(/[\u2028\u2029]/);
    expect(JSON.parse(line).name).toBe(name);
  });
});

describe('the audit trail as a reader sees it', () => {
  it('shows an update as the fields that changed, a create or a delete as every field', () => {
    const before = { name: 'Bakst AS', contact: { name: 'Kari', email: null }, processes: [{ title: 'Billing' }] };
    const after = {
      name: 'Bakst AS',
      contact: { name: 'Ola', email: 'ola@bakst.example' },
      processes: [{ title: 'Billing' }, { title: 'Order' }],
    };
    expect(fieldChanges(before, after)).toEqual([
      { path: 'contact.name', before: 'Kari', after: 'Ola' },
      { path: 'contact.email', before: 'null', after: 'ola@bakst.example' },
      { path: 'processes[1].title', before: undefined, after: 'Order' },
    ]);
    expect(fieldChanges(null, { title: 'AP', endpoints: [] })).toEqual([
      { path: 'title', before: undefined, after: 'AP' },
      { path: 'endpoints', before: undefined, after: '[]' },
    ]);
    expect(fieldChanges({ restricted: true }, null)).toEqual([
      { path: 'restricted', before: 'true', after: undefined },
    ]);
    expect(fieldChanges({ a: 1 }, { a: 1 })).toEqual([]);
  });

  it("turns a local date-time into the API's UTC one, and ages into short words", () => {
    expect(localToIso('')).toBeUndefined();
    expect(localToIso('not a time')).toBeUndefined();
    expect(localToIso('2026-11-23T10:15')).toBe(new Date(2026, 10, 23, 10, 15).toISOString());
    expect([age(0), age(59.9), age(125), age(3 * 3600 + 5 * 60), age(2 * 86_400 + 4 * 3600)]).toEqual([
      '0 s',
      '59 s',
      '2 min',
      '3 h 5 min',
      '2 d 4 h',
    ]);
  });
});

describe('since when an organization can receive a document type', () => {
  it('lists each document type once, since the earliest of its processes', () => {
    const invoice = {
      identifier: 'd-1',
      title: 'Invoice',
      qualifiedIdentifier: 'busdox-docid-qns::invoice',
      visible: true,
      removedFrom: null,
    };
    const order = {
      identifier: 'd-2',
      title: 'Order',
      qualifiedIdentifier: 'busdox-docid-qns::order',
      visible: true,
      removedFrom: null,
    };
    const billing = { ...process({ identifier: 'p-1', documentTypes: [invoice] }), receivableSince: '2026-05-01' };
    const ordering = {
      ...process({ identifier: 'p-2', documentTypes: [order, invoice] }),
      receivableSince: '2025-02-03',
    };
    expect(receivableDocumentTypes([billing, ordering])).toEqual([
      { identifier: 'd-1', title: 'Invoice', qualifiedIdentifier: 'busdox-docid-qns::invoice', since: '2025-02-03' },
      { identifier: 'd-2', title: 'Order', qualifiedIdentifier: 'busdox-docid-qns::order', since: '2025-02-03' },
    ]);
    expect(receivableDocumentTypes([])).toEqual([]);
  });
});

describe('certificates and texts', () => {
  it("reads a certificate's expiry from the base64 DER the API serves, and tells an expired one", async () => {
    const until = new Date('2031-03-04T05:06:07Z');
    const { cert } = await testCertificate('ap.example', new Date('2025-01-01T00:00:00Z'), until);
    expect(certificateExpiry(base64Der(cert))).toBe('2031-03-04T05:06:07Z');
    // After 2049 the certificate says GeneralizedTime rather than UTCTime.
    const later = await testCertificate(
      'ap.example',
      new Date('2025-01-01T00:00:00Z'),
      new Date('2051-12-31T23:59:59Z'),
    );
    expect(certificateExpiry(base64Der(later.cert))).toBe('2051-12-31T23:59:59Z');
    expect(certificateExpiry(undefined)).toBeUndefined();
    expect(certificateExpiry('bm90IGEgY2VydGlmaWNhdGU=')).toBeUndefined();
    expect(certificateExpiry(base64Der(cert).slice(0, 200))).toBeUndefined();
    // Marked when expired, and when it expires within 30 days (the registry's warning window), not only once expired.
    const now = new Date('2026-01-01T00:00:00Z');
    expect(expiryOf('2025-12-31T00:00:00Z', now)).toEqual({ state: 'expired', daysLeft: -1 });
    expect(expiryOf('2026-01-20T12:00:00Z', now)).toEqual({ state: 'expiring', daysLeft: 19 });
    expect(expiryOf('2026-01-31T00:00:00Z', now)).toEqual({ state: 'expiring', daysLeft: 30 });
    expect(expiryOf('2026-02-01T00:00:00Z', now)).toEqual({ state: 'valid', daysLeft: 31 });
  });

  it('every English text has a Norwegian one with the same placeholders', () => {
    // A plural's count (`{count, plural, …}`) is a placeholder too; either language may say it plainly or by its forms.
    const placeholders = (text: string) =>
      [...new Set([...text.matchAll(/\{(\w+)(?:\}|, plural,)/g)].map((match) => match[1]))].sort();
    for (const [key, text] of Object.entries(TEXTS.en)) {
      const norwegian = TEXTS.nb[key as keyof typeof TEXTS.en];
      expect(norwegian, key).toBeTruthy();
      expect(placeholders(norwegian), key).toEqual(placeholders(text));
    }
    expect(translator('en')('pageOf', { page: 2, pages: 9 })).toBe('Page 2 of 9');
  });
});

describe("the API's warning on a saved participant", () => {
  it('is the text of its Warning header, shown after the saved message; none without one', () => {
    const answer = (warning?: string) => new Response(null, { headers: warning ? { warning } : {} });
    expect(warningOf(answer('299 registry "ICD 9909 is deprecated in the Peppol code list"'))).toBe(
      'ICD 9909 is deprecated in the Peppol code list',
    );
    expect(warningOf(answer())).toBeUndefined();
    expect(warningOf(answer('199 other "not ours"'))).toBeUndefined();
  });
});
