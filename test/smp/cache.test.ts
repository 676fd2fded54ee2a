import { describe, expect, it } from 'vitest';
import { SignedAnswerCache } from '../../src/smp/signed-answer-cache.js';
import type { ChangeNotice } from '../../src/db/change-log.js';

const ALICE = 'iso6523-actorid-upis::0192:100000008';
const BOB = 'iso6523-actorid-upis::0192:200000005';
const INVOICE = 'busdox-docid-qns::urn:invoice';
const ORDER = 'busdox-docid-qns::urn:order';
const notice = (resource: ChangeNotice['resource'], identifier: string): ChangeNotice => ({
  seq: 1,
  resource,
  identifier,
  operation: 'update',
});

function filled() {
  const cache = new SignedAnswerCache();
  for (const participant of [ALICE, BOB])
    for (const documentType of [INVOICE, ORDER])
      cache.set(participant, documentType, Buffer.from(participant + documentType));
  return cache;
}

describe('the signed answer cache', () => {
  it('keeps an answer per participant and document type', () => {
    expect(filled().get(ALICE, ORDER)?.toString()).toBe(ALICE + ORDER);
  });

  it("drops only that organization's answers on a participant change, whatever the case of its identifier", () => {
    const cache = filled();
    cache.onChange(notice('participant', ALICE.toUpperCase().replace('ISO6523-ACTORID-UPIS', 'iso6523-actorid-upis')));
    expect([cache.get(ALICE, INVOICE), cache.get(ALICE, ORDER)]).toEqual([undefined, undefined]);
    expect(cache.get(BOB, INVOICE)).toBeDefined();
  });

  it.each([
    'process',
    'document-type',
    'access-point',
    'access-point-provider',
    'service-provider',
    'transport-profile',
  ] as const)('drops everything on a %s change', (resource) => {
    const cache = filled();
    cache.onChange(notice(resource, '00000000-0000-4000-8000-000000000000'));
    expect(cache.size).toBe(0);
  });

  it('keeps everything on a user or capability change (neither is published)', () => {
    const cache = filled();
    cache.onChange(notice('user', 'x'));
    cache.onChange(notice('capability', 'x'));
    expect(cache.size).toBe(4);
  });

  it("stops serving an answer when its participant's delete date arrives", () => {
    const cache = new SignedAnswerCache();
    cache.set(ALICE, INVOICE, Buffer.from('x'), Date.parse('2030-01-01'));
    expect(cache.get(ALICE, INVOICE, Date.parse('2029-12-31T23:59:59Z'))).toBeDefined();
    expect(cache.get(ALICE, INVOICE, Date.parse('2030-01-01T00:00:00Z'))).toBeUndefined();
  });

  it('holds at most its bound in bytes: beyond it, the oldest go until a tenth of it is free', () => {
    const cache = new SignedAnswerCache(20);
    const organizations = Array.from({ length: 11 }, (_, index) => `iso6523-actorid-upis::0192:${index}`);
    for (const organization of organizations.slice(0, 10)) cache.set(organization, INVOICE, Buffer.from('12'));
    expect(cache.size).toBe(10);
    cache.set(organizations[10] as string, INVOICE, Buffer.from('12'));
    expect(organizations.map((organization) => cache.get(organization, INVOICE) !== undefined)).toEqual([
      false,
      false,
      ...Array<boolean>(9).fill(true),
    ]);
  });
});

describe('an answer built while a change was heard', () => {
  it('is not kept, since it may have been built from what the change replaced', () => {
    const cache = new SignedAnswerCache();
    const builtAt = cache.epoch;
    cache.onChange(notice('access-point', '00000000-0000-4000-8000-000000000000'));
    cache.set(ALICE, INVOICE, Buffer.from('built before the change'), Infinity, builtAt);
    expect(cache.get(ALICE, INVOICE)).toBeUndefined();
    cache.set(ALICE, INVOICE, Buffer.from('built after it'), Infinity, cache.epoch);
    expect(cache.get(ALICE, INVOICE)?.toString()).toBe('built after it');
  });
});
