import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogue } from '../../src/code-lists/repository.js';
import { emptyCatalogue } from '../../src/code-lists/catalogue.js';
import { numberChanges } from '../../src/db/change-log.js';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { asAdmin, expectStatus } from '../helpers/administration.js';
import { addDocumentType, addProcess, documentTypeForm } from '../helpers/catalogue.js';
import { feedEnd } from '../helpers/feed.js';
import { addParticipant } from '../helpers/participants.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const http = () => asAdmin(t);

interface Entry {
  resource: string;
  identifier: string;
  operation: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** The removal notices `user` reads in the change feed after `cursor`. */
async function noticesSeenBy(user: TestUser, cursor: string): Promise<Entry[]> {
  await numberChanges(t.db);
  const page = expectStatus(
    await http().get(`/rest/api/changes?after=${encodeURIComponent(cursor)}&limit=1000`, user),
    200,
  );
  return page.entries.filter((entry: Entry) => entry.resource === 'removal-notice');
}

/** An instant `days` ahead, to the second, as the API writes it. */
const daysAhead = (days: number) =>
  new Date(Math.floor((Date.now() + days * 86_400_000) / 1000) * 1000).toISOString().replace('.000Z', 'Z');

describe('the change feed ahead of a removal date', () => {
  it('tells each affected provider once what its participants lose and when, again when the date moves, and when it is cleared', async () => {
    const documentType = await addDocumentType(t.app, t.users.authority);
    const process = await addProcess(t.app, t.users.authority, {
      documentTypes: [{ identifier: documentType.identifier }],
    });
    const unaffected = await addProcess(t.app, t.users.authority);
    const losing = [
      await addParticipant(t.app, t.users.serviceProvider, { processes: [{ identifier: process.identifier }] }),
      await addParticipant(t.app, t.users.serviceProvider, { processes: [{ identifier: process.identifier }] }),
    ];
    await addParticipant(t.app, t.users.otherServiceProvider, { processes: [{ identifier: unaffected.identifier }] });
    const path = `/rest/api/document-types/${documentType.identifier}`;
    const setDate = async (removedFrom: string | null) =>
      expectStatus(
        await http().send(
          'PUT',
          path,
          documentTypeForm({
            qualifiedIdentifier: documentType.qualifiedIdentifier,
            processes: [{ identifier: process.identifier }],
            removedFrom,
          }),
          t.users.authority,
        ),
        200,
      );

    const start = (await feedEnd(t.db)).cursor;
    const instant = daysAhead(30);
    await setDate(instant);
    const notice = {
      provider: expect.objectContaining({ identifier: t.fixture.serviceProviderId }),
      removedFrom: instant,
      participants: losing.length,
      entries: [
        {
          resource: 'document-type',
          identifier: documentType.identifier,
          qualifiedIdentifier: documentType.qualifiedIdentifier,
          participants: 2,
        },
      ],
      listing: '/rest/api/catalogue/removals?days=30',
    };
    const [created, ...more] = await noticesSeenBy(t.users.serviceProvider, start);
    expect(more).toEqual([]);
    expect(created).toMatchObject({
      identifier: t.fixture.serviceProviderId,
      operation: 'create',
      before: null,
      after: notice,
    });
    expect(await noticesSeenBy(t.users.otherServiceProvider, start)).toEqual([]);
    // The authority reads every provider's: here the one affected.
    expect((await noticesSeenBy(t.users.authority, start)).map((entry) => entry.identifier)).toEqual([
      t.fixture.serviceProviderId,
    ]);
    // The operation the notice names lists the participants one by one.
    const listed = expectStatus(
      await t.app.inject({
        url: String(created?.after?.listing),
        headers: { authorization: t.users.serviceProvider.authorization },
      }),
      200,
    );
    expect(
      listed.removals
        .filter(
          (removal: { documentType: { identifier: string } | null }) =>
            removal.documentType?.identifier === documentType.identifier,
        )
        .map((removal: { participant: { identifier: string } }) => removal.participant.identifier)
        .sort(),
    ).toEqual(losing.map(({ identifier }) => identifier).sort());

    // An edit that leaves the date as it is tells nothing.
    const unchanged = (await feedEnd(t.db)).cursor;
    await setDate(instant);
    expect(await noticesSeenBy(t.users.authority, unchanged)).toEqual([]);

    const moving = (await feedEnd(t.db)).cursor;
    const later = daysAhead(40);
    await setDate(later);
    expect(await noticesSeenBy(t.users.serviceProvider, moving)).toEqual([
      expect.objectContaining({
        operation: 'delete',
        before: expect.objectContaining({ removedFrom: instant }),
        after: null,
      }),
      expect.objectContaining({
        operation: 'create',
        before: null,
        after: expect.objectContaining({ removedFrom: later, participants: 2 }),
      }),
    ]);
    expect(await noticesSeenBy(t.users.otherServiceProvider, moving)).toEqual([]);

    const clearing = (await feedEnd(t.db)).cursor;
    expect((await setDate(null)).removedFrom).toBeNull();
    expect(await noticesSeenBy(t.users.serviceProvider, clearing)).toEqual([
      expect.objectContaining({
        operation: 'delete',
        before: expect.objectContaining({ removedFrom: later }),
        after: null,
      }),
    ]);
    expect(expectStatus(await http().get(path), 200).removedFrom).toBeNull();
  });

  it("tells the providers of a date a code-list load sets, in the load's transaction", async () => {
    const documentType = await addDocumentType(t.app, t.users.authority);
    const process = await addProcess(t.app, t.users.authority, {
      documentTypes: [{ identifier: documentType.identifier }],
    });
    await addParticipant(t.app, t.users.otherServiceProvider, { processes: [{ identifier: process.identifier }] });
    const [scheme, value] = String(documentType.qualifiedIdentifier).split('::') as [string, string];
    const [processScheme, processValue] = String(process.qualifiedIdentifier).split('::') as [string, string];
    const start = (await feedEnd(t.db)).cursor;
    const instant = daysAhead(30).replace(/T.*/, 'T00:00:00Z');
    await loadCatalogue(
      t.db,
      {
        ...emptyCatalogue(),
        sources: [{ list: 'document-types', version: '9.7' }],
        documentTypes: [
          {
            scheme,
            value,
            title: 'Invoice',
            domainCommunity: null,
            state: 'deprecated',
            removedFrom: instant,
            processes: [{ scheme: processScheme, value: processValue }],
          },
        ],
      },
      { allowOlder: true },
    );
    expect(await noticesSeenBy(t.users.otherServiceProvider, start)).toEqual([
      expect.objectContaining({
        identifier: t.fixture.otherServiceProviderId,
        operation: 'create',
        after: expect.objectContaining({
          removedFrom: instant,
          participants: 1,
          entries: [expect.objectContaining({ identifier: documentType.identifier })],
        }),
      }),
    ]);
    expect(await noticesSeenBy(t.users.serviceProvider, start)).toEqual([]);
  });
});

describe('clearing a removal date', () => {
  it("is the authority's: a provider is refused and nothing changes", async () => {
    const documentType = await addDocumentType(t.app, t.users.authority, { removedFrom: daysAhead(30) });
    const refused = await http().send(
      'PUT',
      `/rest/api/document-types/${documentType.identifier}`,
      documentTypeForm({ qualifiedIdentifier: documentType.qualifiedIdentifier, removedFrom: null }),
      t.users.serviceProvider,
    );
    expect(refused.statusCode).toBe(403);
    expect(expectStatus(await http().get(`/rest/api/document-types/${documentType.identifier}`), 200).removedFrom).toBe(
      documentType.removedFrom,
    );
  });

  it("clears a process's date with null, while another null in the form still reads as absent", async () => {
    const process = await addProcess(t.app, t.users.authority);
    const path = `/rest/api/processes/${process.identifier}`;
    const form = {
      domain: 'billing',
      title: 'Billing',
      qualifiedIdentifier: process.qualifiedIdentifier,
      restricted: false,
      visible: true,
      capabilities: [],
      documentTypes: [],
      dependencies: [],
      requiredICDs: [],
    };
    expect(
      expectStatus(await http().send('PUT', path, { ...form, removedFrom: daysAhead(30) }, t.users.authority), 200)
        .removedFrom,
    ).not.toBeNull();
    const cleared = expectStatus(
      await http().send('PUT', path, { ...form, alias: null, removedFrom: null }, t.users.authority),
      200,
    );
    expect(cleared).toMatchObject({ removedFrom: null, alias: null });
  });
});
