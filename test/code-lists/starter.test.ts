import { expect, it } from 'vitest';
import { formatQualifiedIdentifier as keyOf } from '../../src/core/schemas.js';
import { readCodeLists } from '../../src/code-lists/codelists.js';
import { loadCatalogue, loadIfNeverSetUp } from '../../src/code-lists/repository.js';
import { starterCatalogue } from '../../src/setup/starter-catalogue.js';
import { useTestApp } from '../helpers/app.js';
import { CODE_LISTS } from '../helpers/code-lists.js';

const t = useTestApp();

it('uses the real Peppol identifiers, names and links of the official lists', async () => {
  const starter = await starterCatalogue();
  const { catalogue: official } = await readCodeLists([CODE_LISTS]);
  expect(starter.processes.map((process) => process.value)).toEqual([
    'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
    'urn:fdc:peppol.eu:poacc:bis:ordering:3',
    'urn:fdc:peppol.eu:poacc:bis:despatch_advice:3',
    'urn:fdc:peppol.eu:poacc:bis:invoice_response:3',
    'urn:fdc:peppol.eu:poacc:bis:mlr:3',
    'urn:peppol:edec:mls',
  ]);
  for (const process of starter.processes) {
    expect(
      official.processes.find((entry) => keyOf(entry) === keyOf(process)),
      keyOf(process),
    ).toMatchObject({ state: 'active' });
  }
  for (const documentType of starter.documentTypes) {
    const entry = official.documentTypes.find((candidate) => keyOf(candidate) === keyOf(documentType));
    expect(entry, keyOf(documentType)).toMatchObject({
      title: documentType.title,
      domainCommunity: documentType.domainCommunity,
      state: 'active',
    });
    expect(entry?.processes).toEqual(expect.arrayContaining(documentType.processes));
  }
  expect(official.transportProfiles).toContainEqual(expect.objectContaining(starter.transportProfiles[0]));
});

it('is loaded into a catalogue never set up, and only then', async () => {
  const report = await loadIfNeverSetUp(t.db, await starterCatalogue());
  expect(report?.processes.added).toBe(6);
  expect(report?.documentTypes.added).toBe(8);

  const billing = await t.app.inject({ url: '/rest/api/processes', query: { query: 'billing:01' } });
  expect(billing.json().content).toEqual([
    expect.objectContaining({
      qualifiedIdentifier: 'cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
      title: 'Peppol BIS Billing 3.0',
      domain: 'POAC',
    }),
  ]);
  expect(
    billing
      .json()
      .content[0].documentTypes.map((documentType: { title: string }) => documentType.title)
      .sort(),
  ).toEqual(['Peppol BIS Billing UBL Credit Note V3', 'Peppol BIS Billing UBL Invoice V3']);

  const [process] = await t.db.query<{ id: string }>('SELECT id FROM processes WHERE value = $1', [
    'urn:fdc:peppol.eu:poacc:bis:mlr:3',
  ]);
  await t.db.query('DELETE FROM processes WHERE id = $1', [process?.id]);
  expect(await loadIfNeverSetUp(t.db, await starterCatalogue())).toBeUndefined();
  expect(await t.db.query('SELECT 1 FROM processes')).toHaveLength(5);
});

it('brings the Message Level Status process and document type, which loading the official lists keeps as they are', async () => {
  const mls = 'cenbii-procid-ubl::urn:peppol:edec:mls';
  const status =
    'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:peppol:edec:mls:1.0::2.1';
  const starter = await starterCatalogue();
  expect(starter.processes.map(keyOf)).toContain(mls);
  expect(starter.documentTypes.find((documentType) => keyOf(documentType) === status)?.processes.map(keyOf)).toEqual([
    mls,
  ]);
  await loadCatalogue(t.db, starter);
  const read = async () => {
    const found = (await t.app.inject({ url: '/rest/api/processes', query: { query: 'urn:peppol:edec:mls' } })).json()
      .content;
    expect(found).toHaveLength(1);
    return found[0];
  };
  const before = await read();
  expect(before).toMatchObject({
    qualifiedIdentifier: mls,
    title: 'Peppol Message Level Status',
    restricted: false,
    visible: true,
  });
  expect(
    before.documentTypes.map((documentType: { qualifiedIdentifier: string }) => documentType.qualifiedIdentifier),
  ).toEqual([status]);

  await loadCatalogue(t.db, (await readCodeLists([CODE_LISTS])).catalogue);
  const after = await read();
  expect(after).toMatchObject({ identifier: before.identifier, title: before.title, restricted: false, visible: true });
  expect(after.documentTypes).toEqual([
    expect.objectContaining({ qualifiedIdentifier: status, title: 'Peppol Message Level Status v1.0', visible: true }),
  ]);
});
