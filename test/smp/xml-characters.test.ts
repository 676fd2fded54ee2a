import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { smlClient, SmlError } from '../../src/network/sml-client.js';
import { appendChange, SYSTEM_ACTOR } from '../../src/db/change-log.js';
import { checkedKey, SmpKeys, type SmpKey } from '../../src/smp/keys.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import {
  accessPointForm,
  addAccessPointProvider,
  addTransportProfile,
  expectStatus,
} from '../helpers/administration.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { addDocumentType, documentTypeForm, processForm } from '../helpers/catalogue.js';
import { testCertificate } from '../helpers/certificates.js';
import { addServed, type DeliveryTestApp, useDeliveryTestApp } from '../helpers/delivery.js';
import { addParticipant, participantForm, PARTICIPANTS, uniqueOrganization } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';
import { checkWellFormed, expectValidSignedAnswer, metadataPath, publishedParticipant } from '../helpers/smp.js';

/**
 * Text that reaches XML: identifiers as Peppol's clients take them (printable US-ASCII) and free text without the
 * characters XML 1.0 cannot carry, refused at the door; and whatever a row stored before these rules holds, every XML
 * the registry writes (service group, signed service metadata, business card, SML requests) stays well-formed.
 */

let t: TestApp;
let smpKey: SmpKey;
beforeAll(async () => {
  const pems = await testCertificate('smp.characters.test');
  smpKey = checkedKey(pems.key, pems.cert, true);
  t = await startTestApp({ smp: { keys: new SmpKeys(smpKey), publicUrl: 'https://smp.example' } });
});
afterAll(() => t?.close());

type Refusal = [
  label: string,
  method: 'POST' | 'PUT',
  url: () => Promise<string> | string,
  payload: () => Promise<unknown> | unknown,
  objectName: string,
  field: string,
  code: 'PrintableAscii' | 'XmlCharacters' | 'URL' | 'typeMismatch',
  who?: 'serviceProvider' | 'admin',
];

const profile = async () => (await addTransportProfile(t)).value as string;
const endpointForm = async (endpoint: Record<string, unknown>) => {
  const value = await profile();
  return accessPointForm((await addAccessPointProvider(t)).identifier, value, {
    endpoints: [{ url: 'https://ap.example/as4', transportProfile: { value }, ...endpoint }],
  });
};
const ownParticipant = async () => (await addParticipant(t.app, t.users.serviceProvider)).identifier;

const REFUSALS: Refusal[] = [
  [
    'a control character in an organization identifier',
    'POST',
    () => PARTICIPANTS,
    () => participantForm({ organizationIdentifier: '666\u0001' }),
    'addParticipantFormDTO',
    'organizationIdentifier',
    'PrintableAscii',
    'serviceProvider',
  ],
  [
    'a blank in an organization identifier',
    'POST',
    () => PARTICIPANTS,
    () => participantForm({ organizationIdentifier: '666 777' }),
    'addParticipantFormDTO',
    'organizationIdentifier',
    'PrintableAscii',
    'serviceProvider',
  ],
  [
    'a letter outside ASCII in an organization identifier',
    'POST',
    () => PARTICIPANTS,
    () => participantForm({ organizationIdentifier: 'ørsta1' }),
    'addParticipantFormDTO',
    'organizationIdentifier',
    'PrintableAscii',
    'serviceProvider',
  ],
  [
    'a tab in an organization part identifier',
    'POST',
    () => PARTICIPANTS,
    () => participantForm({ organizationPartIdentifier: 'dept\t7' }),
    'addParticipantFormDTO',
    'organizationPartIdentifier',
    'PrintableAscii',
    'serviceProvider',
  ],
  [
    'a control character in a name',
    'POST',
    () => PARTICIPANTS,
    () => participantForm({ name: 'Acme\u0001 AS' }),
    'addParticipantFormDTO',
    'name',
    'XmlCharacters',
    'serviceProvider',
  ],
  [
    'U+FFFE in a name',
    'POST',
    () => PARTICIPANTS,
    () => participantForm({ name: 'Acme \uFFFE' }),
    'addParticipantFormDTO',
    'name',
    'XmlCharacters',
    'serviceProvider',
  ],
  [
    'an unpaired surrogate in a name',
    'POST',
    () => PARTICIPANTS,
    () => participantForm({ name: 'Acme \uD800 AS' }),
    'addParticipantFormDTO',
    'name',
    'XmlCharacters',
    'serviceProvider',
  ],
  [
    'a control character in a contact name',
    'POST',
    () => PARTICIPANTS,
    () => participantForm({ contact: { name: 'Kari\u001F' } }),
    'addParticipantFormDTO',
    'contact.name',
    'XmlCharacters',
    'serviceProvider',
  ],
  [
    'a vertical tab in a phone number',
    'PUT',
    async () => `${PARTICIPANTS}/${await ownParticipant()}`,
    () => ({ processes: [], contact: { name: 'Kari', phoneNumber: '+47\u000B22' } }),
    'updateParticipantFormDTO',
    'contact.phoneNumber',
    'XmlCharacters',
    'serviceProvider',
  ],
  [
    'a control character in a process identifier',
    'POST',
    () => '/rest/api/processes',
    () => processForm({ qualifiedIdentifier: 'cenbii-procid-ubl::urn:x\u0001' }),
    'processFormDTO',
    'qualifiedIdentifier',
    'PrintableAscii',
  ],
  [
    "a blank in a process identifier's scheme",
    'POST',
    () => '/rest/api/processes',
    () => processForm({ qualifiedIdentifier: { scheme: 'cenbii procid', value: 'urn:x' } }),
    'processFormDTO',
    'qualifiedIdentifier.scheme',
    'PrintableAscii',
  ],
  [
    'a control character in a process domain',
    'POST',
    () => '/rest/api/processes',
    () => processForm({ domain: 'billing\u0008' }),
    'processFormDTO',
    'domain',
    'XmlCharacters',
  ],
  [
    'a blank in a document type identifier',
    'POST',
    () => '/rest/api/document-types',
    () => documentTypeForm({ qualifiedIdentifier: 'busdox-docid-qns::urn:a b' }),
    'documentTypeFormDTO',
    'qualifiedIdentifier',
    'PrintableAscii',
  ],
  [
    'a control character in a document type title',
    'POST',
    () => '/rest/api/document-types',
    () => documentTypeForm({ title: 'Invoice\u0007' }),
    'documentTypeFormDTO',
    'title',
    'XmlCharacters',
  ],
  [
    'a control character in a transport profile',
    'POST',
    () => '/rest/api/transport-profiles',
    () => ({ value: 'peppol-as4\u0001', title: 'AS4' }),
    'transportProfileFormDTO',
    'value',
    'PrintableAscii',
  ],
  [
    'a control character in an endpoint URL',
    'POST',
    () => '/rest/api/accessPoints',
    () => endpointForm({ url: 'https://ap.example/as4\u0001' }),
    'accessPointFormDTO',
    'endpoints[0].url',
    'URL',
  ],
  [
    'a line feed in an endpoint URL',
    'POST',
    () => '/rest/api/accessPoints',
    () => endpointForm({ url: 'https://ap.example/\nas4' }),
    'accessPointFormDTO',
    'endpoints[0].url',
    'URL',
  ],
  [
    'a control character in a service description',
    'POST',
    () => '/rest/api/accessPoints',
    () => endpointForm({ serviceDescription: 'AS4\u0002' }),
    'accessPointFormDTO',
    'endpoints[0].serviceDescription',
    'XmlCharacters',
  ],
  [
    'a control character in a technical contact',
    'POST',
    () => '/rest/api/accessPoints',
    () => endpointForm({ technicalContactUrl: 'mailto:ops\u0001@ap.example' }),
    'accessPointFormDTO',
    'endpoints[0].technicalContactUrl',
    'typeMismatch',
  ],
  [
    'a control character in a certificate type',
    'POST',
    () => '/rest/api/accessPoints',
    async () => {
      const form = await endpointForm({});
      const [endpoint] = form.endpoints as Array<{ transportProfile: Record<string, unknown> }>;
      (endpoint as { transportProfile: Record<string, unknown> }).transportProfile.certificateTypes = [
        'PEPPOL AP\u0001',
      ];
      return form;
    },
    'accessPointFormDTO',
    'endpoints[0].transportProfile.certificateTypes[0]',
    'XmlCharacters',
  ],
  [
    'a control character in a service provider title',
    'POST',
    () => '/rest/api/service-providers',
    () => ({ title: 'Provider\u0001', accessPoint: { identifier: t.fixture.accessPointId } }),
    'serviceProviderFormDTO',
    'title',
    'XmlCharacters',
  ],
  [
    'a control character in a provider contact',
    'POST',
    () => '/rest/api/access-point-providers',
    () => ({ title: 'AP provider', contact: { name: 'Ann\u0003' } }),
    'accessPointProviderFormDTO',
    'contact.name',
    'XmlCharacters',
  ],
  [
    'a control character in a capability title',
    'POST',
    () => '/rest/api/capabilities',
    () => ({ title: 'Capable\u0004' }),
    'capabilityFormDTO',
    'title',
    'XmlCharacters',
  ],
  // BDMSL's pattern lets it pass: \u0001 is no blank.
  [
    'a control character in a migration key',
    'PUT',
    async () => `${PARTICIPANTS}/${await ownParticipant()}/migration-key`,
    () => ({ migrationKey: 'Ab12@@Cd\u0001ef' }),
    'migrationKeyForm',
    'migrationKey',
    'PrintableAscii',
    'serviceProvider',
  ],
];

describe('characters that real clients or XML would refuse', () => {
  it.each(REFUSALS)(
    'are refused with 400 naming the field: %s',
    async (_label, method, url, payload, objectName, field, code, who = 'admin') => {
      const response = await call(t.app, {
        method,
        url: await url(),
        payload: await payload(),
        user: t.users[who === 'admin' ? 'authority' : who],
      });
      const body = expectErrorBody(response, 400, `Validation failed for object='${objectName}'. Error count: 1`);
      const entry = expectFieldError(body, objectName, field, code);
      if (code === 'PrintableAscii' || code === 'XmlCharacters')
        expect(entry.defaultMessage).toMatch(/^must not contain U\+[0-9A-F]{4}: /);
    },
  );

  it('names the character it refuses, and stores nothing of the request', async () => {
    const organizationIdentifier = uniqueOrganization();
    const response = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.serviceProvider,
      payload: participantForm({ organizationIdentifier: `${organizationIdentifier}\u0001` }),
    });
    const entry = expectFieldError(
      expectErrorBody(response, 400),
      'addParticipantFormDTO',
      'organizationIdentifier',
      'PrintableAscii',
    );
    expect(entry.defaultMessage).toBe(
      'must not contain U+0001: only printable US-ASCII is allowed here (U+0021 to U+007E: no blank, no control character, no other letter)',
    );
    const found = expectStatus(
      await call(t.app, { url: `${PARTICIPANTS}?query=${organizationIdentifier}`, user: t.users.serviceProvider }),
      200,
    );
    expect(found.totalElements).toBe(0);
  });

  it('takes tabs, line breaks and characters beyond the Basic Multilingual Plane in free text', async () => {
    const name = 'Nord\tSyd\r\nØst 😀 AS';
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      name,
      contact: { name: 'Åse\nNordmann' },
    });
    expect(
      expectStatus(
        await call(t.app, { url: `${PARTICIPANTS}/${participant.identifier}`, user: t.users.serviceProvider }),
        200,
      ).name,
    ).toBe(name);
  });
});

/** Stores `value` in a column of a row directly, as a registry before these rules could have. */
async function storeOld(table: string, column: string, value: string, id: string, idColumn = 'id') {
  await t.db.query(`UPDATE ${table} SET ${column} = $1 WHERE ${idColumn} = $2`, [value, id]);
}

describe('every XML the registry writes, from rows stored before these rules', () => {
  const BAD = 'A\u0001B\uFFFEC & <D> "E"\r\nF';

  it('is well-formed: the service group, the signed service metadata (valid, verified) and the business card', async () => {
    const published = await publishedParticipant(t);
    const { participant, documentType, process, accessPoint } = published;
    // A second document type of the process whose identifier holds a control character: listed, percent-encoded.
    const other = await addDocumentType(t.app, t.users.authority, { processes: [{ identifier: process.identifier }] });
    await storeOld(
      'document_types',
      'value',
      `${(other.qualifiedIdentifier as string).split('::')[1]}\u0001`,
      other.identifier,
    );
    await storeOld('participants', 'name', BAD, participant.identifier);
    await storeOld('endpoints', 'service_description', BAD, accessPoint.identifier, 'access_point_id');
    await storeOld('processes', 'value', `${process.qualifiedIdentifier.split('::')[1]}\u0001\r`, process.identifier);
    const [endpoint] = await t.db.query<{ id: string }>(
      'SELECT transport_profile_id AS id FROM endpoints WHERE access_point_id = $1',
      [accessPoint.identifier],
    );
    await storeOld('transport_profiles', 'value', 'peppol-as4\u0002', endpoint?.id as string);

    const group = await t.app.inject({ url: `/${encodeURIComponent(participant.qualifiedIdentifier)}` });
    expect(group.statusCode, group.body).toBe(200);
    const wellFormed = await checkWellFormed(group.body);
    expect(wellFormed.ok, wellFormed.output).toBe(true);
    expect(group.body).toContain('%01');

    const metadata = await t.app.inject({
      url: metadataPath(participant.qualifiedIdentifier, documentType.qualifiedIdentifier),
    });
    expect(metadata.statusCode, metadata.body).toBe(200);
    await expectValidSignedAnswer(metadata.body, smpKey.certificatePem);
    // The carriage return is kept (a character reference: raw, it would be read back as a line feed), and what XML
    // cannot carry is shown as U+FFFD; markup is escaped.
    expect(metadata.body).toMatch(
      /<smp:ServiceDescription>A\uFFFDB\uFFFDC &amp; &lt;D&gt; (&quot;|")E(&quot;|")&#(13|xD);(&#10;|\n)F<\/smp:ServiceDescription>/,
    );
    expect(metadata.body).not.toContain('\r');

    const card = await t.app.inject({ url: `/businesscard/${encodeURIComponent(participant.qualifiedIdentifier)}` });
    expect(card.statusCode, card.body).toBe(200);
    const cardWellFormed = await checkWellFormed(card.body);
    expect(cardWellFormed.ok, cardWellFormed.output).toBe(true);
    expect(card.body).toContain('<Name>A\uFFFDB\uFFFDC &amp; &lt;D&gt; &quot;E&quot;&#13;&#10;F</Name>');
  });

  it('is not written for an identifier that XML cannot carry: its lookups are refused with 400', async () => {
    const { participant, documentType } = await publishedParticipant(t);
    const broken = `${participant.organizationIdentifier}\u0001`;
    await t.db.transaction(async (tx) => {
      const processes = await tx.query(
        'DELETE FROM participant_processes WHERE participant_id = $1 RETURNING process_id',
        [participant.identifier],
      );
      await tx.query('UPDATE participants SET organization_identifier = $1 WHERE id = $2', [
        broken,
        participant.identifier,
      ]);
      await tx.query(
        `INSERT INTO participant_processes (participant_id, process_id, icd, organization_identifier)
                      SELECT $1, p.process_id, '0192', $2 FROM jsonb_to_recordset($3::jsonb) AS p(process_id uuid)`,
        [participant.identifier, broken, JSON.stringify(processes)],
      );
    });
    const qualified = `iso6523-actorid-upis::0192:${broken}`;
    for (const url of [
      `/${encodeURIComponent(qualified)}`,
      metadataPath(qualified, documentType.qualifiedIdentifier),
      `/businesscard/${encodeURIComponent(qualified)}`,
    ]) {
      expectErrorBody(
        await t.app.inject({ url }),
        400,
        'Invalid participant identifier: it holds U+0001, which XML cannot carry',
      );
    }
  });
});

describe("the SML's SOAP requests", () => {
  let server: Server;
  let url: string;
  const bodies: string[] = [];
  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        response
          .writeHead(200, { 'content-type': 'text/xml' })
          .end(
            '<?xml version="1.0"?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body/></S:Envelope>',
          );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('are well-formed whatever an old row holds, and one XML cannot carry is never sent', async () => {
    const sml = smlClient({ url, smpId: 'smp "<&>\'' });
    await sml.create('iso6523-actorid-upis::0192:a\rb&<c>"d\'');
    await sml.prepareToMigrate('iso6523-actorid-upis::0192:tab\there', 'Ab12@@Cd<&>ef');
    const refused = await sml.create('iso6523-actorid-upis::0192:666\u0001').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SmlError);
    expect(refused).toMatchObject({ final: true, message: /not sent to the SML: .*U\+0001/ });
    expect(bodies).toHaveLength(2);
    for (const body of bodies) {
      const wellFormed = await checkWellFormed(body);
      expect(wellFormed.ok, `${wellFormed.output}\n${body}`).toBe(true);
    }
    expect(bodies[0]).toContain('0192:a&#13;b&amp;&lt;c&gt;&quot;d&apos;</ids:ParticipantIdentifier>');
    expect(bodies[1]).toContain('0192:tab&#9;here</ids:ParticipantIdentifier>');
  });
});

describe('delivery to a local SML of an organization whose stored identifier XML cannot carry', () => {
  let delivering: DeliveryTestApp;
  useDeliveryTestApp((started) => {
    delivering = started;
  });

  it('records it as refused, without sending it, and delivers the organizations after it', async () => {
    const { t: own, app, served } = delivering;
    // With a process each: a provider whose participant has none is told `no_process`, not the organization's state.
    const old = await addServed(app, own.users.serviceProvider, served);
    const broken = `${old.organizationIdentifier}\u0001`;
    await own.db.transaction(async (tx) => {
      // A row from before the rules, processes and all: the keys that name the participant change with it.
      await tx.query("SET LOCAL session_replication_role = 'replica'");
      await tx.query('UPDATE participants SET organization_identifier = $1 WHERE id = $2', [broken, old.identifier]);
      await tx.query('UPDATE participant_processes SET organization_identifier = $1 WHERE participant_id = $2', [
        broken,
        old.identifier,
      ]);
      await appendChange(tx, SYSTEM_ACTOR, {
        resource: 'participant',
        identifier: `iso6523-actorid-upis::0192:${broken}`,
        operation: 'update',
        before: null,
        after: null,
      });
    });
    const after = await addServed(app, own.users.serviceProvider, served);
    const network = async (identifier: string) =>
      expectStatus(
        await call(app, { url: `${PARTICIPANTS}/${identifier}/network`, user: own.users.serviceProvider }),
        200,
      );
    await vi.waitFor(
      async () => {
        expect((await network(after.identifier)).sml.state).toBe('registered');
        const refused = await network(old.identifier);
        expect(refused.sml.state).toBe('refused');
        expect(refused.sml.lastError.message).toMatch(/not sent to the SML: .*U\+0001/);
      },
      { timeout: 10_000, interval: 100 },
    );
  });
});
