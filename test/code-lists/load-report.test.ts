import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readCodeLists } from '../../src/code-lists/codelists.js';
import { loadCatalogue } from '../../src/code-lists/repository.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { asAdmin, expectStatus } from '../helpers/administration.js';
import { CODE_LISTS } from '../helpers/code-lists.js';

const ORDERING = 'cenbii-procid-ubl::urn:fdc:peppol.eu:poacc:bis:ordering:3';
const CATALOGUE_ONLY = 'cenbii-procid-ubl::urn:fdc:peppol.eu:poacc:bis:catalogue_only:3';
const INVOICE =
  'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1';
const XRECHNUNG =
  'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:xoev-de:kosit:standard:xrechnung_2.0::2.1';

let t: TestApp;
let newer: string;

/** 9.8: the invoice deprecated with a removal date, the catalogue-only process deprecated, ordering still active. */
async function writeNewerRelease(dir: string) {
  await cp(CODE_LISTS, dir, { recursive: true });
  const edit = async (name: string, change: (xml: string) => string) =>
    writeFile(join(dir, name), change(await readFile(join(dir, name), 'utf8')));
  await edit('processes.xml', (xml) =>
    xml
      .replace('version="9.7"', 'version="9.8"')
      .replace(
        'value="urn:fdc:peppol.eu:poacc:bis:catalogue_only:3" state="active"',
        'value="urn:fdc:peppol.eu:poacc:bis:catalogue_only:3" state="deprecated"',
      ),
  );
  await edit('document-types.xml', (xml) =>
    xml
      .replace('version="9.7"', 'version="9.8"')
      .replace(
        /(name="Peppol BIS Billing UBL Invoice V3" [^>]*?)state="active"/,
        '$1state="deprecated" removal-date="2027-05-15"',
      ),
  );
}

const processNamed = async (qualified: string) =>
  (await t.app.inject({ url: '/rest/api/processes', query: { query: qualified.split('::')[1] as string } }))
    .json()
    .content.find((process: { qualifiedIdentifier: string }) => process.qualifiedIdentifier === qualified);

/** The authority restricts a process through the API, as in the console. */
async function restrict(qualified: string) {
  const process = await processNamed(qualified);
  const form = {
    domain: process.domain,
    title: process.title,
    qualifiedIdentifier: process.qualifiedIdentifier,
    restricted: true,
    visible: process.visible,
    capabilities: [],
    documentTypes: process.documentTypes.map(({ identifier }: { identifier: string }) => ({ identifier })),
    dependencies: [],
    requiredICDs: process.requiredICDs,
  };
  expectStatus(await asAdmin(t).send('PUT', `/rest/api/processes/${process.identifier}`, form, t.users.authority), 200);
}

beforeAll(async () => {
  t = await startTestApp();
  newer = await mkdtemp(join(tmpdir(), 'registry-codelists-report-'));
  await writeNewerRelease(newer);
}, 120_000);
afterAll(async () => {
  await t.close();
  await rm(newer, { recursive: true, force: true });
});

it("keeps removal dates, keeps the authority's restriction saying so, and reports every change by entry", async () => {
  const first = await loadCatalogue(t.db, (await readCodeLists([CODE_LISTS])).catalogue);
  expect(first.entries).toContainEqual({
    list: 'document-types',
    entry: XRECHNUNG,
    change: 'added',
    fields: expect.arrayContaining([
      { field: 'removed_from', before: null, after: expect.stringMatching(/^2026-08-01T00:00:00/) },
    ]),
  });
  expect(first.entries.filter((entry) => entry.change === 'added')).toHaveLength(
    109 + 321 + first.transportProfiles.added,
  );
  await t.app.changes.catchUp();
  expect(
    (await t.app.inject({ url: `/rest/api/document-types?size=400` }))
      .json()
      .content.find((type: { qualifiedIdentifier: string }) => type.qualifiedIdentifier === XRECHNUNG).removedFrom,
  ).toBe('2026-08-01T00:00:00Z');

  await restrict(ORDERING);
  await restrict(CATALOGUE_ONLY);
  const report = await loadCatalogue(t.db, (await readCodeLists([newer])).catalogue);
  await t.app.changes.catchUp();

  // The list has ordering active: the authority's restriction stays, and the report says it was kept.
  expect((await processNamed(ORDERING)).restricted).toBe(true);
  expect(report.entries).toContainEqual(
    expect.objectContaining({
      list: 'processes',
      entry: ORDERING,
      change: 'kept',
      note: expect.stringMatching(/authority/),
    }),
  );
  // The list deprecates catalogue-only itself: restricted by the list now, so not the authority's any more.
  expect((await processNamed(CATALOGUE_ONLY)).restricted).toBe(true);
  expect(report.entries).toContainEqual({
    list: 'processes',
    entry: CATALOGUE_ONLY,
    change: 'updated',
    fields: [{ field: 'code_list_state', before: 'active', after: 'deprecated' }],
  });
  expect(report.entries).toContainEqual({
    list: 'document-types',
    entry: INVOICE,
    change: 'updated',
    fields: [
      { field: 'restricted', before: false, after: true },
      { field: 'removed_from', before: null, after: expect.stringMatching(/^2027-05-15T00:00:00/) },
      { field: 'code_list_state', before: 'active', after: 'deprecated' },
    ],
  });
  // Every entry changed is named: the counts and the entries agree.
  const updated = report.entries.filter((entry) => entry.change === 'updated');
  expect(updated).toHaveLength(
    report.processes.updated + report.documentTypes.updated + report.transportProfiles.updated,
  );

  // Loading the same release again changes nothing, and still says what it kept.
  const again = await loadCatalogue(t.db, (await readCodeLists([newer])).catalogue);
  expect(again.entries).toEqual([expect.objectContaining({ entry: ORDERING, change: 'kept' })]);
}, 120_000);
