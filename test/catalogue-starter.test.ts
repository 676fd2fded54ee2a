import { expect, it } from 'vitest';
import { formatQualifiedIdentifier as keyOf } from '../src/core/schemas.js';
import { readCodeLists } from '../src/code-lists/codelists.js';
import { loadIfNeverSetUp } from '../src/code-lists/repository.js';
import { starterCatalogue } from '../src/setup/starter-catalogue.js';
import { useTestApp } from './helpers/app.js';
import { CODE_LISTS } from './helpers/code-lists.js';

const t = useTestApp();

it('uses the real Peppol identifiers, names and links of the official lists', async () => {
  const starter = await starterCatalogue();
  const { catalogue: official } = await readCodeLists([CODE_LISTS]);
  expect(starter.processes.map((process) => process.value)).toEqual([
    'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0', 'urn:fdc:peppol.eu:poacc:bis:ordering:3',
    'urn:fdc:peppol.eu:poacc:bis:despatch_advice:3', 'urn:fdc:peppol.eu:poacc:bis:invoice_response:3',
    'urn:fdc:peppol.eu:poacc:bis:mlr:3',
  ]);
  for (const process of starter.processes) {
    expect(official.processes.find((entry) => keyOf(entry) === keyOf(process)), keyOf(process)).toMatchObject({ state: 'active' });
  }
  for (const documentType of starter.documentTypes) {
    const entry = official.documentTypes.find((candidate) => keyOf(candidate) === keyOf(documentType));
    expect(entry, keyOf(documentType)).toMatchObject({ title: documentType.title, domainCommunity: documentType.domainCommunity, state: 'active' });
    expect(entry?.processes).toEqual(expect.arrayContaining(documentType.processes));
  }
  expect(official.transportProfiles).toContainEqual(expect.objectContaining(starter.transportProfiles[0]));
});

it('is loaded into a catalogue never set up, and only then', async () => {
  const report = await loadIfNeverSetUp(t.db, await starterCatalogue());
  expect(report?.processes.added).toBe(5);
  expect(report?.documentTypes.added).toBe(7);

  const billing = await t.app.inject({ url: '/rest/api/processes', query: { query: 'billing:01' } });
  expect(billing.json().content).toEqual([expect.objectContaining({
    qualifiedIdentifier: 'cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0', title: 'Peppol BIS Billing 3.0', domain: 'POAC',
  })]);
  expect(billing.json().content[0].documentTypes.map((documentType: { title: string }) => documentType.title).sort())
    .toEqual(['Peppol BIS Billing UBL Credit Note V3', 'Peppol BIS Billing UBL Invoice V3']);

  const [process] = await t.db.query<{ id: string }>('SELECT id FROM processes WHERE value = $1', ['urn:fdc:peppol.eu:poacc:bis:mlr:3']);
  await t.db.query('DELETE FROM processes WHERE id = $1', [process?.id]);
  expect(await loadIfNeverSetUp(t.db, await starterCatalogue())).toBeUndefined();
  expect(await t.db.query('SELECT 1 FROM processes')).toHaveLength(4);
});
