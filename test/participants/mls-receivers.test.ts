import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalDirectory, type LocalDirectory } from '../../dev/local-directory.js';
import { startLocalSml, type LocalSml } from '../../dev/local-sml.js';
import { loadCatalogue } from '../../src/code-lists/repository.js';
import { ImportError, importParticipants } from '../../src/participants/json-lines.js';
import { starterCatalogue } from '../../src/setup/starter-catalogue.js';
import { checkedKey, SmpKeys } from '../../src/smp/keys.js';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import {
  accessPointForm,
  addAccessPointProvider,
  addTransportProfile,
  asAdmin,
  expectStatus,
} from '../helpers/administration.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { testCertificate } from '../helpers/certificates.js';
import { deliveryOptions, SMP_ID } from '../helpers/delivery.js';
import { byQualified, participantForm, PARTICIPANTS } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';
import { expectValidSignedAnswer, metadataPath, readByXpath, useAccessPointOf } from '../helpers/smp.js';

const MLS_PROCESS = 'cenbii-procid-ubl::urn:peppol:edec:mls';
const MLS_DOCUMENT_TYPE =
  'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:peppol:edec:mls:1.0::2.1';
const RECEIVERS = '/rest/api/mls-receivers';
const OWN = 'iso6523-actorid-upis::0242:000123';
const OTHERS = 'iso6523-actorid-upis::0242:000456';

let t: TestApp;
let sml: LocalSml;
let directory: LocalDirectory;
let smpCertificate: string;
let ownCertificate: string;
let thirdProviderId: string;

/** An access point whose one AS4 endpoint has a certificate with this subject CN, of a new access point provider. */
async function accessPointWithCertificate(commonName: string) {
  const certificate = (await testCertificate(commonName)).cert;
  const profile = await addTransportProfile(t);
  const accessPoint = expectStatus(
    await asAdmin(t).send(
      'POST',
      '/rest/api/accessPoints',
      accessPointForm((await addAccessPointProvider(t)).identifier, profile.value, {
        endpoints: [
          {
            url: `https://${commonName.toLowerCase()}.example/as4`,
            transportProfile: { value: profile.value },
            certificate,
          },
        ],
      }),
      t.users.authority,
    ),
    201,
  );
  return { accessPoint, certificate };
}

const mlsForm = (organizationIdentifier: string) =>
  participantForm({ icd: '0242', organizationIdentifier, processes: [{ qualifiedIdentifier: MLS_PROCESS }] });

const addAs = (user: TestUser, form: Record<string, unknown>) =>
  call(t.app, { method: 'POST', url: PARTICIPANTS, user, payload: form });

beforeAll(async () => {
  sml = await startLocalSml();
  directory = await startLocalDirectory();
  const pems = await testCertificate('smp.mls.test');
  smpCertificate = pems.cert;
  t = await startTestApp({
    smp: { keys: new SmpKeys(checkedKey(pems.key, pems.cert, true)), publicUrl: 'https://smp.example' },
    ...deliveryOptions(sml, directory),
  });
  await loadCatalogue(t.db, await starterCatalogue());
  // Provider one's access point carries the Seat ID PNO000123, provider two's PSE000456, a third's none.
  const own = await accessPointWithCertificate('PNO000123');
  ownCertificate = own.certificate;
  await useAccessPointOf(t, t.fixture.serviceProviderId, own.accessPoint.identifier);
  await useAccessPointOf(
    t,
    t.fixture.otherServiceProviderId,
    (await accessPointWithCertificate('PSE000456')).accessPoint.identifier,
  );
  thirdProviderId = expectStatus(
    await asAdmin(t).send('POST', '/rest/api/service-providers', {
      title: 'Provider Without Seat',
      accessPoint: { identifier: (await accessPointWithCertificate('not-a-seat.example')).accessPoint.identifier },
    }),
    201,
  ).identifier;
});
afterAll(async () => {
  await t?.close();
  await sml?.close();
  await directory?.close();
});

describe("a service provider's own identifier (ICD 0242): its Message Level Status address", () => {
  it('is registered by the provider whose access point certificate carries its Main ID, with the MLS process', async () => {
    const added = expectStatus(await addAs(t.users.serviceProvider, mlsForm('000123')), 201);
    expect(added).toMatchObject({
      qualifiedIdentifier: OWN,
      icd: '0242',
      organizationIdentifier: '000123',
      provider: { identifier: t.fixture.serviceProviderId },
    });
    expect(added.processes.map((process: { qualifiedIdentifier: string }) => process.qualifiedIdentifier)).toEqual([
      MLS_PROCESS,
    ]);
    // A variant of the Main ID (<Main ID>-<Use Case>), any case.
    expectStatus(
      await addAs(t.users.serviceProvider, participantForm({ icd: '0242', organizationIdentifier: '000123-MLS' })),
      201,
    );
  });

  it('is refused to any other provider, in plain words, and nothing is stored', async () => {
    const refused = expectErrorBody(await addAs(t.users.otherServiceProvider, mlsForm('000123-MLS.test')), 403);
    expect(refused.message).toBe(
      '0242:000123-MLS.test is the service provider identifier of the provider whose Peppol access point certificate ' +
        "has a Seat ID ending in 000123; your access points' certificates carry the Seat ID PSE000456.",
    );
    expect(
      (
        await call(t.app, {
          url: byQualified('iso6523-actorid-upis::0242:000123-mls.test'),
          user: t.users.serviceProvider,
        })
      ).statusCode,
    ).toBe(404);
    // Nor may a provider hand its own to another.
    const transfer = await call(t.app, {
      method: 'PUT',
      url: byQualified(OWN, `/transfer/${t.fixture.otherServiceProviderId}`),
      user: t.users.serviceProvider,
    });
    expectErrorBody(
      transfer,
      403,
      /^0242:000123 is the service provider identifier .*the access point certificates of the service provider 'Provider Two' carry the Seat ID PSE000456\.$/,
    );
    expect(
      expectStatus(await call(t.app, { url: byQualified(OWN), user: t.users.serviceProvider }), 200).provider
        .identifier,
    ).toBe(t.fixture.serviceProviderId);
  });

  it("is refused by the command line's import for a provider whose certificates do not carry it", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mls-import-'));
    try {
      const path = join(dir, 'mls.jsonl');
      await writeFile(path, `${JSON.stringify(mlsForm('000456-MLS'))}\n${JSON.stringify(mlsForm('000777'))}\n`);
      const outcome = await importParticipants(t.db, path, {
        serviceProviderId: t.fixture.otherServiceProviderId,
      }).catch((error: unknown) => error);
      expect(outcome).toBeInstanceOf(ImportError);
      expect((outcome as ImportError).message.split('\n')).toEqual([
        'Imported 1 participant (0 already present); 1 of 2 lines is wrong and was not imported.',
        'line 2: 0242:000777 is the service provider identifier of the provider whose Peppol access point certificate has a Seat ID ' +
          "ending in 000777; the access point certificates of the service provider 'Provider Two' carry the Seat ID PSE000456.",
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is shown to its provider alone, and registered for a provider by the authority in one step', async () => {
    const own = expectStatus(await call(t.app, { url: RECEIVERS, user: t.users.serviceProvider }), 200);
    expect(own).toEqual([
      {
        serviceProvider: { identifier: t.fixture.serviceProviderId, title: 'Provider One' },
        seatIds: ['PNO000123'],
        addresses: [
          { qualifiedIdentifier: OWN, seatId: 'PNO000123', participant: expect.any(String), receivesMls: true },
        ],
      },
    ]);
    expectErrorBody(
      await call(t.app, {
        url: `${RECEIVERS}?serviceProvider=${t.fixture.otherServiceProviderId}`,
        user: t.users.serviceProvider,
      }),
      403,
    );
    expectErrorBody(
      await call(t.app, {
        method: 'POST',
        url: RECEIVERS,
        user: t.users.serviceProvider,
        payload: { serviceProvider: { identifier: t.fixture.otherServiceProviderId } },
      }),
      403,
      'A service provider registers its own MLS address only',
    );
    expectErrorBody(
      await call(t.app, { method: 'POST', url: RECEIVERS, user: t.users.serviceProvider, payload: {} }),
      409,
      "The MLS address of the service provider 'Provider One' is registered already: iso6523-actorid-upis::0242:000123",
    );

    const registered = expectStatus(
      await call(t.app, {
        method: 'POST',
        url: RECEIVERS,
        user: t.users.authority,
        payload: { serviceProvider: { identifier: t.fixture.otherServiceProviderId } },
      }),
      201,
    );
    expect(registered.addresses).toEqual([
      { qualifiedIdentifier: OTHERS, seatId: 'PSE000456', participant: expect.any(String), receivesMls: true },
    ]);
    const participant = expectStatus(
      await call(t.app, { url: byQualified(OTHERS), user: t.users.otherServiceProvider }),
      200,
    );
    expect(participant).toMatchObject({
      name: 'Provider Two',
      contact: { name: 'Nora Network' },
      provider: { identifier: t.fixture.otherServiceProviderId },
    });
    expect(
      participant.processes.map((process: { qualifiedIdentifier: string }) => process.qualifiedIdentifier),
    ).toEqual([MLS_PROCESS]);

    const all = expectStatus(await call(t.app, { url: RECEIVERS, user: t.users.admin }), 200);
    expect(all.map((receiver: { serviceProvider: { title: string } }) => receiver.serviceProvider.title)).toEqual([
      'Provider One',
      'Provider Two',
      'Provider Without Seat',
    ]);
    expectErrorBody(
      await call(t.app, {
        method: 'POST',
        url: RECEIVERS,
        user: t.users.admin,
        payload: { serviceProvider: { identifier: thirdProviderId } },
      }),
      409,
      /^The certificates of the service provider 'Provider Without Seat''s access point carry no Peppol Seat ID/,
    );
    const unnamed = expectErrorBody(
      await call(t.app, { method: 'POST', url: RECEIVERS, user: t.users.authority, payload: {} }),
      400,
    );
    expect(unnamed.errors).toEqual([expect.objectContaining({ field: 'serviceProvider', code: 'NotNull' })]);
    const unknown = expectErrorBody(
      await call(t.app, {
        method: 'POST',
        url: RECEIVERS,
        user: t.users.authority,
        payload: { serviceProvider: { identifier: '00000000-0000-4000-8000-000000000000' } },
      }),
      400,
    );
    expect(unknown.errors).toEqual([expect.objectContaining({ field: 'serviceProvider', code: 'NotFound' })]);
    expectErrorBody(
      await call(t.app, { method: 'POST', url: RECEIVERS, user: t.users.accessPointProvider, payload: {} }),
      403,
    );
  });

  it('is registered in the SML like any participant, and never pushed to the Directory', async () => {
    await vi.waitFor(
      () => {
        const held = sml.registrations.get(SMP_ID) ?? new Set<string>();
        expect([held.has(OWN), held.has(OTHERS)]).toEqual([true, true]);
      },
      { timeout: 10_000, interval: 50 },
    );
    await vi.waitFor(
      async () => {
        const deliveries = expectStatus(
          await call(t.app, { url: '/rest/api/deliveries', user: t.users.authority }),
          200,
        );
        expect(deliveries.map((entry: { pending: number }) => entry.pending)).toEqual([0, 0]);
      },
      { timeout: 10_000, interval: 50 },
    );
    expect([...directory.indexed.keys()].filter((participant) => participant.includes('::0242:'))).toEqual([]);
    expectErrorBody(await t.app.inject({ url: `/businesscard/${encodeURIComponent(OWN)}` }), 404);
  });

  it('is published in the SMP with the MLS document type, its signed service metadata verified by xmlsec1', async () => {
    const group = await t.app.inject({ url: `/${encodeURIComponent(OWN)}` });
    expect(group.statusCode, group.body).toBe(200);
    expect(decodeURIComponent(group.body)).toContain(`/services/${MLS_DOCUMENT_TYPE}`);
    const metadata = await t.app.inject({ url: metadataPath(OWN, MLS_DOCUMENT_TYPE) });
    expect(metadata.statusCode, metadata.body).toBe(200);
    await expectValidSignedAnswer(metadata.body, smpCertificate);
    expect(await readByXpath(metadata.body, 'string(//*[local-name()="ProcessIdentifier"])')).toBe(
      'urn:peppol:edec:mls',
    );
    expect(await readByXpath(metadata.body, 'string(//*[local-name()="Certificate"])')).toBe(
      ownCertificate.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''),
    );
  });
});
