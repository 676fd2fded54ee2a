import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { TestApp } from './app.js';
import {
  accessPointForm,
  addAccessPointProvider,
  addTransportProfile,
  asAdmin,
  expectStatus,
} from './administration.js';
import { addDocumentType, addProcess } from './catalogue.js';
import { testCertificate } from './certificates.js';
import { REFERENCE_DATA } from './code-lists.js';
import { addParticipant, byQualified } from './participants.js';
import { call } from './requests.js';

const run = promisify(execFile);
export const SMP_XSD_DIR = join(REFERENCE_DATA, 'peppol-smp-xsd');
const SMP_XSD = join(SMP_XSD_DIR, 'peppol-smp-1.0.xsd');

/** Runs a tool on `content` written to a temporary file; the exit status and what it printed. */
async function onFile(content: string | Buffer, command: (file: string) => [string, string[]]) {
  const dir = await mkdtemp(join(tmpdir(), 'smp-test-'));
  const file = join(dir, 'document.xml');
  try {
    await writeFile(file, content);
    const [tool, args] = command(file);
    try {
      const { stdout, stderr } = await run(tool, args);
      return { ok: true, output: stdout + stderr };
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string };
      return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** libxml2's own reading of a document: whether it is well-formed XML. */
export const checkWellFormed = (xml: string | Buffer) => onFile(xml, (file) => ['xmllint', ['--noout', file]]);

/** What libxml2 reads at `xpath` of a document (without the line feed xmllint ends it with). */
export async function readByXpath(xml: string | Buffer, xpath: string): Promise<string> {
  const read = await onFile(xml, (file) => ['xmllint', ['--xpath', xpath, file]]);
  expect(read.ok, read.output).toBe(true);
  return read.output.replace(/\n$/, '');
}

/** libxml2's own schema validation against peppol-smp-1.0.xsd. */
export const validateAgainstSmpSchema = (xml: string | Buffer) =>
  onFile(xml, (file) => ['xmllint', ['--noout', '--schema', SMP_XSD, file]]);

/**
 * xmlsec1 (libxmlsec/OpenSSL, independent of xml-crypto) verifies the signature with the certificate in its KeyInfo,
 * which must be the trusted SMP certificate; only `URI=""` references are allowed.
 */
export async function verifySignature(xml: string | Buffer, trustedCertificatePem: string) {
  const dir = await mkdtemp(join(tmpdir(), 'smp-cert-'));
  const certificate = join(dir, 'smp.pem');
  try {
    await writeFile(certificate, trustedCertificatePem);
    return await onFile(xml, (file) => [
      'xmlsec1',
      ['--verify', '--enabled-reference-uris', 'empty', '--trusted-pem', certificate, file],
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function expectValidSignedAnswer(xml: string | Buffer, trustedCertificatePem: string) {
  const valid = await validateAgainstSmpSchema(xml);
  expect(valid.ok, valid.output).toBe(true);
  const verified = await verifySignature(xml, trustedCertificatePem);
  expect(verified.ok, verified.output).toBe(true);
}

/**
 * The identifiers an SMP answer names (`ids:ParticipantIdentifier`, and `ids:DocumentIdentifier` where it has one),
 * each as `scheme::value`, as libxml2 reads them.
 */
export async function identifiersIn(xml: string | Buffer): Promise<{ participant: string; documentType: string }> {
  const read = (element: string) =>
    readByXpath(xml, `concat(//*[local-name()='${element}']/@scheme, '::', //*[local-name()='${element}'])`);
  const documentType = await read('DocumentIdentifier');
  return { participant: await read('ParticipantIdentifier'), documentType: documentType === '::' ? '' : documentType };
}

/** The path of the signed service metadata of a participant for a document type, percent-encoded. */
export const metadataPath = (participant: string, documentType: string) =>
  `/${encodeURIComponent(participant)}/services/${encodeURIComponent(documentType)}`;

/** Makes `accessPointId` the access point of the service provider. */
export async function useAccessPointOf(app: TestApp, serviceProviderId: string, accessPointId: string) {
  const own = asAdmin(app);
  const current = expectStatus(await own.get(`/rest/api/service-providers/${serviceProviderId}`), 200);
  expectStatus(
    await own.send(
      'PUT',
      `/rest/api/service-providers/${serviceProviderId}`,
      { title: current.title, accessPoint: { identifier: accessPointId } },
      app.users.authority,
    ),
    200,
  );
}

/**
 * An access point with one published endpoint, used by the fixture's service provider, and a new participant of
 * that provider receiving a new document type: its signed service metadata is at `path`.
 */
export async function publishedParticipant(t: TestApp) {
  const provider = await addAccessPointProvider(t);
  const profile = await addTransportProfile(t);
  const endpoint = {
    url: 'https://published.example/as4',
    transportProfile: { value: profile.value },
    certificate: (await testCertificate('published.example')).cert,
  };
  const accessPoint = expectStatus(
    await asAdmin(t).send(
      'POST',
      '/rest/api/accessPoints',
      accessPointForm(provider.identifier, profile.value, { endpoints: [endpoint] }),
      t.users.authority,
    ),
    201,
  );
  await useAccessPointOf(t, t.fixture.serviceProviderId, accessPoint.identifier);
  const documentType = await addDocumentType(t.app, t.users.authority);
  const process = await addProcess(t.app, t.users.authority, {
    documentTypes: [{ identifier: documentType.identifier }],
  });
  const participant = await addParticipant(t.app, t.users.serviceProvider, {
    processes: [{ identifier: process.identifier }],
  });
  return {
    provider,
    endpoint,
    accessPoint,
    documentType,
    process,
    participant,
    path: metadataPath(participant.qualifiedIdentifier, documentType.qualifiedIdentifier),
  };
}

/**
 * Gives a published participant a second process carrying the document type `documentTypeId` (a change its SMP
 * answers show); the process added.
 */
export async function addProcessTo(
  t: TestApp,
  { participant, process }: Pick<Awaited<ReturnType<typeof publishedParticipant>>, 'participant' | 'process'>,
  documentTypeId: string,
) {
  const added = await addProcess(t.app, t.users.authority, { documentTypes: [{ identifier: documentTypeId }] });
  const updated = await call(t.app, {
    method: 'PUT',
    url: byQualified(participant.qualifiedIdentifier),
    user: t.users.serviceProvider,
    payload: {
      contact: participant.contact,
      processes: [{ identifier: process.identifier }, { identifier: added.identifier }],
    },
  });
  expect(updated.statusCode, updated.body).toBe(200);
  return added;
}
