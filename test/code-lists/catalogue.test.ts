import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCodeLists, CodeListError } from '../../src/code-lists/codelists.js';
import { catalogueSources, loadCatalogue } from '../../src/code-lists/repository.js';
import { useTestApp } from '../helpers/app.js';
import { CODE_LISTS } from '../helpers/code-lists.js';

const BILLING = 'cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const INVOICE =
  'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1';

const t = useTestApp();

/** Every catalogue row with its identifier, so two snapshots show whether anything changed. */
async function snapshot() {
  const processes = await t.db.query<{
    id: string;
    key: string;
    title: string;
    domain: string;
    restricted: boolean;
    visible: boolean;
  }>(
    `SELECT id, scheme || '::' || value AS key, title, domain, restricted, visible FROM processes ORDER BY scheme, value`,
  );
  const documentTypes = await t.db.query<{
    id: string;
    key: string;
    title: string;
    restricted: boolean;
    visible: boolean;
  }>(
    `SELECT id, scheme || '::' || value AS key, title, restricted, visible, domain_community FROM document_types ORDER BY scheme, value`,
  );
  const links = await t.db.query<{ process: string; documentType: string }>(
    `SELECT p.value AS process, d.value AS "documentType" FROM process_document_types pdt
       JOIN processes p ON p.id = pdt.process_id JOIN document_types d ON d.id = pdt.document_type_id
      ORDER BY 1, 2`,
  );
  const transportProfiles = await t.db.query(
    `SELECT id, value, title, restricted FROM transport_profiles ORDER BY value`,
  );
  return { processes, documentTypes, links, transportProfiles };
}

async function load(...paths: string[]) {
  const { catalogue } = await readCodeLists(paths);
  return loadCatalogue(t.db, catalogue);
}

describe('loading the Peppol code lists v9.7', () => {
  let first: Awaited<ReturnType<typeof snapshot>>;

  beforeAll(async () => {
    await load(CODE_LISTS);
    first = await snapshot();
  });

  it('loads every process, document type, link and transport profile of the lists', () => {
    expect(first.processes).toHaveLength(109);
    expect(first.documentTypes).toHaveLength(321);
    expect(first.links).toHaveLength(409);
    expect(first.transportProfiles.map((row) => row.value)).toContain('peppol-transport-as4-v2_0');
    expect(first.transportProfiles).toHaveLength(5);
  });

  it('makes deprecated and removed entries restricted, and removed ones invisible', () => {
    const process = (value: string) => first.processes.find((row) => row.key === `cenbii-procid-ubl::${value}`);
    expect(process('urn:fdc:peppol.eu:2017:poacc:billing:01:1.0')).toMatchObject({
      restricted: false,
      visible: true,
      domain: 'POAC',
    });
    expect(process('urn:www.cenbii.eu:profile:bii01:ver1.0')).toMatchObject({ restricted: true, visible: true });
    expect(first.processes.find((row) => row.key === 'oioubl-procid-ubl::Reference-Utility-1.0')).toMatchObject({
      restricted: true,
      visible: false,
    });
    expect(first.processes.filter((row) => row.restricted)).toHaveLength(18);
    expect(first.documentTypes.filter((row) => row.restricted)).toHaveLength(112);
    expect(first.documentTypes.filter((row) => !row.visible)).toHaveLength(41);
  });

  it('gives processes a readable title made from their identifier', () => {
    expect(first.processes.find((row) => row.key === BILLING)?.title).toBe('Peppol poacc billing 01 1.0');
    expect(
      first.processes.find((row) => row.key === 'cenbii-procid-ubl::urn:peppol:bis:billing_with_response')?.title,
    ).toBe('Peppol BIS billing with response');
    // The lists' process of documents outside any: a title that says so, not a bare "none".
    expect(first.processes.find((row) => row.key === 'cenbii-procid-ubl::none')?.title).toBe('No process (none)');
  });

  it('changes nothing when the same lists are loaded again: same rows, same identifiers', async () => {
    const report = await load(CODE_LISTS);
    expect(report.processes).toEqual({ added: 0, updated: 0, unchanged: 109 });
    expect(report.documentTypes).toEqual({ added: 0, updated: 0, unchanged: 321 });
    expect(report.links).toEqual({ added: 0, removed: 0 });
    expect(await snapshot()).toEqual(first);
    expect((await catalogueSources(t.db)).map(({ list, version }) => ({ list, version }))).toEqual([
      { list: 'document-types', version: '9.7' },
      { list: 'participant-identifier-schemes', version: '9.7' },
      { list: 'processes', version: '9.7' },
      { list: 'transport-profiles', version: '9.7' },
    ]);
  });

  it('serves them through the catalogue API with their real Peppol identifiers', async () => {
    const processes = await t.app.inject({
      url: '/rest/api/processes',
      query: { query: 'billing:01:1.0', size: '50' },
    });
    expect(processes.statusCode).toBe(200);
    const billing = processes
      .json()
      .content.find((process: { qualifiedIdentifier: string }) => process.qualifiedIdentifier === BILLING);
    expect(billing).toMatchObject({ domain: 'POAC', restricted: false, visible: true });
    expect(
      billing.documentTypes.map((documentType: { qualifiedIdentifier: string }) => documentType.qualifiedIdentifier),
    ).toContain(INVOICE);
    expect(processes.json().totalElements).toBeGreaterThanOrEqual(1);

    const all = await t.app.inject({ url: '/rest/api/processes', query: { size: '500' } });
    expect(all.json().totalElements).toBe(109);
    const documentTypes = await t.app.inject({ url: '/rest/api/document-types', query: { size: '500' } });
    expect(documentTypes.statusCode).toBe(200);
    expect(documentTypes.json().totalElements).toBe(321);
    const invoice = documentTypes
      .json()
      .content.find((documentType: { qualifiedIdentifier: string }) => documentType.qualifiedIdentifier === INVOICE);
    expect(invoice).toMatchObject({ title: 'Peppol BIS Billing UBL Invoice V3', visible: true });

    const profiles = await t.app.inject({
      url: '/rest/api/transport-profiles',
      headers: { authorization: t.users.accessPointProvider.authorization },
    });
    expect(profiles.statusCode).toBe(200);
    expect(profiles.json().content).toContainEqual(
      expect.objectContaining({ value: 'peppol-transport-as4-v2_0', title: 'Peppol AS4 v2.0', restricted: false }),
    );
    expect(profiles.json().content).toContainEqual(
      expect.objectContaining({ value: 'busdox-transport-as2-ver1p0', restricted: true }),
    );
  });
});

describe('reading code-list files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'registry-codelists-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads the four lists of a release, skips other XML files of a directory and refuses a file that is no code list', async () => {
    const { catalogue, skipped } = await readCodeLists([CODE_LISTS]);
    expect(skipped).toEqual([]);
    expect(catalogue.sources.map((source) => source.list).sort()).toEqual([
      'document-types',
      'participant-identifier-schemes',
      'processes',
      'transport-profiles',
    ]);
    const other = join(dir, 'other');
    await mkdir(other);
    await writeFile(join(other, 'notes.xml'), '<notes/>');
    expect((await readCodeLists([other])).skipped).toEqual([join(other, 'notes.xml')]);
    await expect(readCodeLists([join(other, 'notes.xml')])).rejects.toThrow(CodeListError);
    await expect(readCodeLists([join(dir, 'missing.xml')])).rejects.toThrow(/no such file/);
  });

  it('names the file and the entry of a malformed list', async () => {
    const file = join(dir, 'broken.xml');
    await writeFile(file, '<processes version="1"><process scheme="s" value="v" state="retired"/></processes>');
    await expect(readCodeLists([file])).rejects.toThrow("broken.xml: process #1: unknown state 'retired'");
    await writeFile(file, '<processes version="1"><process scheme="s"');
    await expect(readCodeLists([file])).rejects.toThrow(/broken\.xml: not a readable XML file/);
  });
});
