import Fastify from 'fastify';
import type { TSchema } from 'typebox';
import { beforeAll, describe, expect, it } from 'vitest';
import { OrganizationProcessList } from '../../src/organizations/schemas.js';
import { Participant, ProcessList } from '../../src/participants/schemas.js';
import { useTestApp } from '../helpers/app.js';
import { addDocumentType, addProcess, processForm } from '../helpers/catalogue.js';
import { addParticipant, byQualified, participantForm, PARTICIPANTS } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';

const t = useTestApp();

/** What Fastify's own serializer writes for `value` by `schema`: the bytes an assembled answer must be. */
async function serializedBy(schema: TSchema, value: unknown): Promise<string> {
  const reference = Fastify();
  reference.get('/', { schema: { response: { 200: schema } } }, async () => value);
  const response = await reference.inject({ url: '/' });
  await reference.close();
  return response.body;
}

// Quotes, a backslash, a control character, letters beyond ASCII and beyond the BMP, and a line separator.
const AWKWARD = 'Faktura "EHF" \\ \t æøå 😀 \u2028 slutt';

describe("answers assembled from the catalogue's processes", () => {
  let participant: { qualifiedIdentifier: string };
  let changing: { identifier: string; qualifiedIdentifier: string };
  const urls = () => ({
    participant: byQualified(participant.qualifiedIdentifier),
    participantProcesses: byQualified(participant.qualifiedIdentifier, '/processes'),
    organizationProcesses: `/rest/api/organizations/${encodeURIComponent(participant.qualifiedIdentifier)}/processes`,
  });
  const schemas = {
    participant: Participant,
    participantProcesses: ProcessList,
    organizationProcesses: OrganizationProcessList,
  };

  beforeAll(async () => {
    const { admin, serviceProvider } = t.users;
    const documentType = await addDocumentType(t.app, admin, { title: AWKWARD });
    changing = await addProcess(t.app, admin, { title: AWKWARD, alias: null, requiredICDs: ['0192'] });
    const plain = await addProcess(t.app, admin, { documentTypes: [{ identifier: documentType.identifier }] });
    participant = await addParticipant(t.app, serviceProvider, {
      name: AWKWARD,
      contact: { name: AWKWARD },
      processes: [{ identifier: changing.identifier }, { identifier: plain.identifier }],
    });
  });

  /** Each answer, checked to be byte for byte what its schema's serializer writes of it; the parsed answers. */
  async function answers() {
    const parsed: Record<string, unknown> = {};
    for (const [name, url] of Object.entries(urls())) {
      const response = await call(t.app, { url, user: t.users.serviceProvider });
      expect(response.statusCode, response.body).toBe(200);
      parsed[name] = response.json();
      expect(response.body, name).toBe(await serializedBy(schemas[name as keyof typeof schemas], parsed[name]));
      expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.body));
    }
    return parsed as {
      participant: { name: string; processes: { title: string }[] };
      participantProcesses: { title: string }[];
      organizationProcesses: { title: string; receivableSince: string }[];
    };
  }

  it('are byte for byte what the schemas serialize, asked once and again', async () => {
    const first = await answers();
    expect(first.participant.name).toBe(AWKWARD);
    expect(first.participant.processes.map((process) => process.title)).toContain(AWKWARD);
    expect(first.organizationProcesses.every((process) => /^\d{4}-\d{2}-\d{2}$/.test(process.receivableSince))).toBe(
      true,
    );
    expect(await answers()).toEqual(first);
  });

  it('include the answers of an add and of an update, byte for byte', async () => {
    const processes = [{ identifier: changing.identifier }];
    const added = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.otherServiceProvider,
      payload: participantForm({ name: AWKWARD, processes }),
    });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.body).toBe(await serializedBy(Participant, added.json()));
    const updated = await call(t.app, {
      method: 'PUT',
      url: byQualified(added.json().qualifiedIdentifier),
      user: t.users.otherServiceProvider,
      payload: { contact: { name: AWKWARD }, processes },
    });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.body).toBe(await serializedBy(Participant, updated.json()));
    expect(updated.json().processes.map((process: { title: string }) => process.title)).toEqual([AWKWARD]);
  });

  it('show a process as it is once the catalogue changes it', async () => {
    await answers();
    const changed = await call(t.app, {
      method: 'PUT',
      url: `/rest/api/processes/${changing.identifier}`,
      user: t.users.admin,
      payload: processForm({
        qualifiedIdentifier: changing.qualifiedIdentifier,
        title: 'Renamed',
        requiredICDs: ['0192'],
      }),
    });
    expect(changed.statusCode, changed.body).toBe(200);
    const after = await answers();
    for (const processes of [after.participant.processes, after.participantProcesses, after.organizationProcesses]) {
      expect(processes.map((process) => process.title)).toContain('Renamed');
      expect(processes.map((process) => process.title)).not.toContain(AWKWARD);
    }
  });
});
