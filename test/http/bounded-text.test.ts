import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { asAdmin, expectStatus } from '../helpers/administration.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { feedEnd, positionOf } from '../helpers/feed.js';
import { call, unique } from '../helpers/requests.js';
import { PARTICIPANTS, participantForm } from '../helpers/participants.js';

/** The audit and the feed of this file's app carry at most this much JSON per page. */
const PAGE_MAX_BYTES = 6000;

let t: TestApp;
let api: ReturnType<typeof asAdmin>;
beforeAll(async () => {
  t = await startTestApp({ changePageMaxBytes: PAGE_MAX_BYTES });
  api = asAdmin(t);
});
afterAll(() => t?.close());

const text = (length: number) => 'x'.repeat(length);
const email = (length: number) => `${text(length - '@example.no'.length)}@example.no`;

interface Entry {
  seq: number;
  identifier: string;
}

describe('free text is bounded', () => {
  it('refuses a participant whose name, contact name, email or phone number is too long, naming each field, and takes each at its bound', async () => {
    const form = participantForm({
      name: text(256),
      contact: { name: text(256), email: email(255), phoneNumber: text(51) },
    });
    const response = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.serviceProvider,
      payload: form,
    });
    const body = expectErrorBody(response, 400, "Validation failed for object='addParticipantFormDTO'. Error count: 4");
    expectFieldError(body, 'addParticipantFormDTO', 'name', 'Size', 'size must be between 0 and 255');
    expectFieldError(body, 'addParticipantFormDTO', 'contact.name', 'Size', 'size must be between 1 and 255');
    expectFieldError(body, 'addParticipantFormDTO', 'contact.email', 'Size', 'size must be between 0 and 254');
    expectFieldError(body, 'addParticipantFormDTO', 'contact.phoneNumber', 'Size', 'size must be between 0 and 50');
    const atBounds = participantForm({
      name: text(255),
      contact: { name: text(255), email: email(254), phoneNumber: text(50) },
    });
    expectStatus(
      await call(t.app, { method: 'POST', url: PARTICIPANTS, user: t.users.serviceProvider, payload: atBounds }),
      201,
    );
  });

  it('refuses a title over 255 characters in the administration forms', async () => {
    const body = expectErrorBody(await api.send('POST', '/rest/api/capabilities', { title: text(256) }), 400);
    expectFieldError(body, 'capabilityFormDTO', 'title', 'Size');
    expectStatus(await api.send('POST', '/rest/api/capabilities', { title: `${unique('c')}${text(200)}` }), 201);
  });

  it('says each bound in the machine-readable description', async () => {
    const description = (await t.app.inject({ url: '/v3/api-docs' })).json();
    const contact = description.components.schemas.ContactForm.properties;
    expect([contact.name.maxLength, contact.email.maxLength, contact.phoneNumber.maxLength]).toEqual([255, 254, 50]);
    expect(description.components.schemas.AddParticipantForm.properties.name.maxLength).toBe(255);
    expect(description.components.schemas.ProcessForm.properties.alias.maxLength).toBe(255);
  });
});

/** Participants whose create entries (about 2 kB each) pass the page budget three or four at a time. */
async function addLargeParticipants(count: number) {
  const { cursor } = await feedEnd(t.db);
  const identifiers: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const form = participantForm({
      name: text(255),
      contact: { name: text(255), email: email(254), phoneNumber: text(50) },
    });
    const created = expectStatus(
      await call(t.app, { method: 'POST', url: PARTICIPANTS, user: t.users.serviceProvider, payload: form }),
      201,
    );
    identifiers.push(created.qualifiedIdentifier);
  }
  return { after: cursor, identifiers };
}

describe('pages of the change feed and the audit are bounded in bytes', () => {
  it('stops a feed page before it passes the budget, and the cursor goes on from its last entry, nothing lost', async () => {
    const { after, identifiers } = await addLargeParticipants(8);
    const seen: string[] = [];
    let cursor = after;
    for (let pages = 0; pages < 20; pages += 1) {
      const response = await api.get(
        `/rest/api/changes?after=${cursor}&limit=1000&resource=participant`,
        t.users.authority,
      );
      expect(response.body.length).toBeLessThanOrEqual(PAGE_MAX_BYTES + 200);
      const page = expectStatus(response, 200);
      if (page.entries.length === 0) break;
      expect(page.entries.length).toBeLessThan(identifiers.length);
      expect(await positionOf(t.db, page.next)).toBe(page.entries.at(-1).seq);
      seen.push(...page.entries.map((entry: Entry) => entry.identifier));
      cursor = page.next;
    }
    expect(seen).toEqual(identifiers);
  });

  it('answers an entry larger than the budget on a page of its own', async () => {
    const tiny = await startTestApp({ changePageMaxBytes: 1 });
    try {
      const admin = asAdmin(tiny);
      for (let i = 0; i < 2; i += 1)
        expectStatus(await admin.send('POST', '/rest/api/capabilities', { title: unique('big') }), 201);
      const page = expectStatus(await admin.get('/rest/api/changes?resource=capability'), 200);
      expect(page.entries).toHaveLength(1);
      expect(await positionOf(tiny.db, page.next)).toBe(page.entries[0].seq);
    } finally {
      await tiny.close();
    }
  });

  it('serves an audit page that would pass the budget at a smaller size its envelope names, and paging on by it loses nothing', async () => {
    const { identifiers } = await addLargeParticipants(8);
    const query = '/rest/api/audit?resource=participant&operation=create&sort=seq,ASC';
    const everything = expectStatus(await api.get(`${query}&size=2000`, t.users.authority), 200);
    expect(everything.size).toBeLessThan(2000);
    expect(everything.number).toBe(0);
    expect(everything.numberOfElements).toBe(everything.size);
    expect(everything.totalPages).toBe(Math.ceil(everything.totalElements / everything.size));

    const seen: string[] = [];
    let next = { page: 0, size: 8 };
    for (let pages = 0; pages < 40; pages += 1) {
      const page = expectStatus(await api.get(`${query}&page=${next.page}&size=${next.size}`, t.users.authority), 200);
      expect(8 % page.size).toBe(0);
      seen.push(...page.content.map((entry: Entry) => entry.identifier));
      if (page.last) break;
      next = { page: page.number + 1, size: page.size };
    }
    expect(seen.slice(-identifiers.length)).toEqual(identifiers);
    expect(seen).toHaveLength(everything.totalElements);
  });
});
