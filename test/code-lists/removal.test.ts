import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import type { ChangeNotice } from '../../src/db/change-log.js';
import { SignedAnswerCache } from '../../src/smp/signed-answer-cache.js';
import { checkedKey, SmpKeys, type SmpKey } from '../../src/smp/keys.js';
import { startOtherInstance, startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { asAdmin, expectStatus } from '../helpers/administration.js';
import { addDocumentType, addProcess, documentTypeForm } from '../helpers/catalogue.js';
import { testCertificate } from '../helpers/certificates.js';
import { testDatabaseKind } from '../helpers/database.js';
import { addParticipant, byQualified } from '../helpers/participants.js';
import { metadataPath, publishedParticipant } from '../helpers/smp.js';

const PUBLIC_URL = 'https://smp.example';

let t: TestApp;
let other: Awaited<ReturnType<typeof startOtherInstance>> | undefined;
let smpKey: SmpKey;
/** The base URL of each instance, over a socket: a kept answer is sent there before the framework (early answers). */
const instances: Array<{ name: string; app: App; url: string }> = [];

const smpOptions = () => ({
  smp: { keys: new SmpKeys(smpKey), publicUrl: PUBLIC_URL, cache: new SignedAnswerCache() },
});

async function listening(name: string, app: App) {
  await app.listen({ port: 0, host: '127.0.0.1' });
  instances.push({ name, app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` });
}

beforeAll(async () => {
  const pems = await testCertificate('removal.smp.test');
  smpKey = checkedKey(pems.key, pems.cert, true);
  t = await startTestApp(smpOptions());
  await listening('first instance', t.app);
  // Two instances on one database, each with its own kept answers: only PostgreSQL is shared between processes.
  if (testDatabaseKind === 'postgres') {
    other = await startOtherInstance(t, smpOptions());
    await listening('second instance', other.app);
  }
}, 120_000);
afterAll(async () => {
  await other?.close();
  await t?.close();
});

const http = () => asAdmin(t);

/** Makes a change through the first instance and waits until every instance has heard it from the change log. */
async function heardByAll(change: () => Promise<unknown>, resource: ChangeNotice['resource'], identifier: string) {
  const heard: ChangeNotice[] = [];
  const stop = other?.app.changes.subscribe((notice) => heard.push(notice));
  try {
    await change();
    if (other)
      await vi.waitFor(() => expect(heard).toContainEqual(expect.objectContaining({ resource, identifier })), {
        timeout: 5000,
      });
  } finally {
    stop?.();
  }
}

const get = (base: string, path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { headers });
const listedIn = (xml: string) =>
  [...xml.matchAll(/<smp:ServiceMetadataReference href="[^"]*\/services\/([^"]*)"/g)].map(([, segment]) =>
    decodeURIComponent(segment ?? ''),
  );

/** Waits until `instant` (ms) has passed by this machine's clock, which the instances read too. */
async function passing(instant: number) {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, instant - Date.now()) + 50));
}

describe('a document type at its removal instant', () => {
  it('is withdrawn from the SMP answers of every instance at that instant, with no change and no reload, and kept on the participant marked removed', async () => {
    const { documentType: kept, process, participant } = await publishedParticipant(t);
    const removed = await addDocumentType(t.app, t.users.authority, {
      processes: [{ identifier: process.identifier }],
    });
    const organization = participant.qualifiedIdentifier;
    const removedFrom = new Date(Math.ceil((Date.now() + 10_000) / 1000) * 1000);
    const instant = removedFrom.toISOString().replace('.000Z', 'Z');
    await heardByAll(
      async () =>
        expectStatus(
          await http().send(
            'PUT',
            `/rest/api/document-types/${removed.identifier}`,
            documentTypeForm({
              qualifiedIdentifier: removed.qualifiedIdentifier,
              processes: [{ identifier: process.identifier }],
              removedFrom: instant,
            }),
            t.users.authority,
          ),
          200,
        ),
      'document-type',
      removed.identifier,
    );

    // Before the instant: published by each, and kept by each (asked twice, the second answer is the kept one).
    const tags = new Set<string | null>();
    for (const { name, url } of instances) {
      for (let round = 0; round < 2; round += 1) {
        const group = await get(url, `/${encodeURIComponent(organization)}`);
        expect(group.status, name).toBe(200);
        tags.add(group.headers.get('etag'));
        expect(listedIn(await group.text()).sort(), name).toEqual(
          [kept.qualifiedIdentifier, removed.qualifiedIdentifier].sort(),
        );
        expect((await get(url, metadataPath(organization, removed.qualifiedIdentifier))).status, name).toBe(200);
      }
    }
    // The same answer has the same validator on every instance, kept or made anew: a cache may ask any of them.
    expect(tags.size).toBe(1);
    const groupTag = [...tags][0] as string;
    const keptTag = (
      await get(instances[0]?.url as string, metadataPath(organization, kept.qualifiedIdentifier))
    ).headers.get('etag') as string;
    expect(Date.now(), 'the answers before the instant took too long for this test').toBeLessThan(
      removedFrom.getTime(),
    );

    await passing(removedFrom.getTime());
    for (const { name, url } of instances) {
      // The instant changes what the service group shows, so its validator; the kept type's metadata shows the same.
      const group = await get(url, `/${encodeURIComponent(organization)}`, { 'if-none-match': groupTag });
      expect([name, group.status]).toEqual([name, 200]);
      expect(group.headers.get('etag'), name).not.toBe(groupTag);
      expect(listedIn(await group.text()), name).toEqual([kept.qualifiedIdentifier]);
      expect(
        (await get(url, metadataPath(organization, kept.qualifiedIdentifier), { 'if-none-match': keptTag })).status,
        name,
      ).toBe(304);
      const gone = await get(url, metadataPath(organization, removed.qualifiedIdentifier));
      expect(gone.status, name).toBe(404);
      expect((await gone.json()).message, name).toMatch(/No service metadata for this document type is published/);
      expect((await get(url, metadataPath(organization, kept.qualifiedIdentifier))).status, name).toBe(200);
      // The public lookup shows the process without it.
      const lookup = await get(url, `/rest/api/organizations/${encodeURIComponent(organization)}/processes`);
      const [shown] = await lookup.json();
      expect(
        shown.documentTypes.map((type: { qualifiedIdentifier: string }) => type.qualifiedIdentifier),
        name,
      ).toEqual([kept.qualifiedIdentifier]);
    }

    // The participant's record keeps it, marked with its removal instant.
    const record = expectStatus(
      await t.app.inject({
        url: byQualified(participant.qualifiedIdentifier),
        headers: { authorization: t.users.serviceProvider.authorization },
      }),
      200,
    );
    const [own] = record.processes;
    expect(own.documentTypes).toContainEqual(
      expect.objectContaining({ qualifiedIdentifier: removed.qualifiedIdentifier, removedFrom: instant }),
    );
    expect(own.documentTypes).toContainEqual(
      expect.objectContaining({ qualifiedIdentifier: kept.qualifiedIdentifier, removedFrom: null }),
    );
  }, 60_000);

  it('refuses a removal instant that is not an instant with its offset, and changes nothing', async () => {
    const documentType = await addDocumentType(t.app, t.users.authority);
    const refused = await http().send(
      'PUT',
      `/rest/api/document-types/${documentType.identifier}`,
      documentTypeForm({ qualifiedIdentifier: documentType.qualifiedIdentifier, removedFrom: 'next tuesday' }),
      t.users.authority,
    );
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors).toEqual([expect.objectContaining({ field: 'removedFrom' })]);
    expect(
      expectStatus(await http().get(`/rest/api/document-types/${documentType.identifier}`), 200).removedFrom,
    ).toBeNull();
  });

  it('keeps the removal instant an edit does not name, and moves it to a later one', async () => {
    const documentType = await addDocumentType(t.app, t.users.authority, { removedFrom: '2030-01-01T00:00:00Z' });
    const path = `/rest/api/document-types/${documentType.identifier}`;
    const form = documentTypeForm({ qualifiedIdentifier: documentType.qualifiedIdentifier, title: 'Renamed' });
    expect(expectStatus(await http().send('PUT', path, form, t.users.authority), 200).removedFrom).toBe(
      '2030-01-01T00:00:00Z',
    );
    expect(
      expectStatus(
        await http().send('PUT', path, { ...form, removedFrom: '2031-06-01T12:00:00+02:00' }, t.users.authority),
        200,
      ).removedFrom,
    ).toBe('2031-06-01T10:00:00Z');
  });
});

describe('a process at its removal instant', () => {
  it('is withdrawn with all its document types at that instant', async () => {
    const { documentType, process, participant } = await publishedParticipant(t);
    const removedFrom = new Date(Math.ceil((Date.now() + 6000) / 1000) * 1000);
    const current = expectStatus(await http().get(`/rest/api/processes/${process.identifier}`), 200);
    await heardByAll(
      async () =>
        expectStatus(
          await http().send(
            'PUT',
            `/rest/api/processes/${process.identifier}`,
            {
              domain: current.domain,
              title: current.title,
              qualifiedIdentifier: current.qualifiedIdentifier,
              restricted: false,
              visible: true,
              capabilities: [],
              documentTypes: [{ identifier: documentType.identifier }],
              dependencies: [],
              requiredICDs: [],
              removedFrom: removedFrom.toISOString(),
            },
            t.users.authority,
          ),
          200,
        ),
      'process',
      process.identifier,
    );
    const organization = participant.qualifiedIdentifier;
    for (const { name, url } of instances)
      expect((await get(url, metadataPath(organization, documentType.qualifiedIdentifier))).status, name).toBe(200);
    await passing(removedFrom.getTime());
    for (const { name, url } of instances) {
      expect(listedIn(await (await get(url, `/${encodeURIComponent(organization)}`)).text()), name).toEqual([]);
      expect((await get(url, metadataPath(organization, documentType.qualifiedIdentifier))).status, name).toBe(404);
      expect(
        await (await get(url, `/rest/api/organizations/${encodeURIComponent(organization)}/processes`)).json(),
        name,
      ).toEqual([]);
    }
    const record = expectStatus(
      await t.app.inject({
        url: byQualified(participant.qualifiedIdentifier),
        headers: { authorization: t.users.serviceProvider.authorization },
      }),
      200,
    );
    expect(record.processes).toEqual([
      expect.objectContaining({
        identifier: process.identifier,
        removedFrom: removedFrom.toISOString().replace('.000Z', 'Z'),
      }),
    ]);
  }, 60_000);
});

describe('GET /rest/api/catalogue/removals: who loses what ahead of a removal date', () => {
  it('lists a provider its own participants only, and the authority every one with the counts per instant; the metrics count them', async () => {
    const documentType = await addDocumentType(t.app, t.users.authority);
    const process = await addProcess(t.app, t.users.authority, {
      documentTypes: [{ identifier: documentType.identifier }],
    });
    const own = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: process.identifier }],
    });
    const others = await addParticipant(t.app, t.users.otherServiceProvider, {
      processes: [{ identifier: process.identifier }],
    });
    const instant = new Date(Math.floor((Date.now() + 20 * 86_400_000) / 1000) * 1000)
      .toISOString()
      .replace('.000Z', 'Z');
    expectStatus(
      await http().send(
        'PUT',
        `/rest/api/document-types/${documentType.identifier}`,
        documentTypeForm({
          qualifiedIdentifier: documentType.qualifiedIdentifier,
          processes: [{ identifier: process.identifier }],
          removedFrom: instant,
        }),
        t.users.authority,
      ),
      200,
    );
    const removalsAs = async (user: TestUser) =>
      expectStatus(
        await t.app.inject({
          url: '/rest/api/catalogue/removals?days=30',
          headers: { authorization: user.authorization },
        }),
        200,
      );
    const ofThisType = (answer: { removals: Array<{ documentType: { identifier: string } | null }> }) =>
      answer.removals.filter((removal) => removal.documentType?.identifier === documentType.identifier);

    const providers = await removalsAs(t.users.serviceProvider);
    expect(ofThisType(providers)).toEqual([
      {
        removedFrom: instant,
        participant: { identifier: own.identifier, qualifiedIdentifier: own.qualifiedIdentifier },
        serviceProvider: expect.objectContaining({ identifier: t.fixture.serviceProviderId }),
        process: { identifier: process.identifier, qualifiedIdentifier: process.qualifiedIdentifier },
        documentType: { identifier: documentType.identifier, qualifiedIdentifier: documentType.qualifiedIdentifier },
      },
    ]);
    expect(
      providers.removals.every(
        (removal: { serviceProvider: { identifier: string } }) =>
          removal.serviceProvider.identifier === t.fixture.serviceProviderId,
      ),
    ).toBe(true);
    expect(providers.counts).toContainEqual({ removedFrom: instant, participants: 1, entries: 1 });

    const authority = await removalsAs(t.users.authority);
    expect(
      ofThisType(authority)
        .map((removal) => (removal as unknown as { participant: { identifier: string } }).participant.identifier)
        .sort(),
    ).toEqual([own.identifier, others.identifier].sort());
    expect(authority.counts).toContainEqual({ removedFrom: instant, participants: 2, entries: 2 });
    // Not within the days asked: not listed.
    const sooner = expectStatus(
      await t.app.inject({
        url: '/rest/api/catalogue/removals?days=10',
        headers: { authorization: t.users.authority.authorization },
      }),
      200,
    );
    expect(sooner.counts).not.toContainEqual(expect.objectContaining({ removedFrom: instant }));

    const metrics = await t.app.metrics.metrics();
    expect(metrics).toContain(`catalogue_removal_participants{removed_from="${instant}"} 2`);
    expect(metrics).not.toContain(own.qualifiedIdentifier);
  });

  it('is refused to anonymous callers and bounds what it is asked', async () => {
    expect((await t.app.inject({ url: '/rest/api/catalogue/removals' })).statusCode).toBe(401);
    const tooFar = await t.app.inject({
      url: '/rest/api/catalogue/removals?days=100000',
      headers: { authorization: t.users.authority.authorization },
    });
    expect(tooFar.statusCode).toBe(400);
  });
});
