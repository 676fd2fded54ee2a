import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readCodeLists } from '../../src/code-lists/codelists.js';
import {
  catalogueSources,
  compareVersions,
  loadCatalogue,
  OlderReleaseError,
} from '../../src/code-lists/repository.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { CODE_LISTS } from '../helpers/code-lists.js';

const ORDERING = 'urn:fdc:peppol.eu:poacc:bis:ordering:3';
const BILLING = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const INVOICE_NAME = 'Peppol BIS Billing UBL Invoice V3';
const NEW_PROCESS = 'urn:fdc:example.org:2026:claims:1.0';

let t: TestApp;
let newer: string;

/** A release after 9.7, written the way OpenPeppol publishes one: changed states, names and links. */
async function writeNewerRelease(dir: string) {
  await cp(CODE_LISTS, dir, { recursive: true });
  const edit = async (name: string, change: (xml: string) => string) => {
    const path = join(dir, name);
    await writeFile(path, change(await readFile(path, 'utf8')));
  };
  await edit('processes.xml', (xml) =>
    xml
      .replace('version="9.7"', 'version="9.8"')
      .replace(`value="${ORDERING}" state="active"`, `value="${ORDERING}" state="deprecated"`)
      .replace(
        '</processes>',
        `  <process scheme="cenbii-procid-ubl" value="${NEW_PROCESS}" state="active" />\n</processes>`,
      ),
  );
  await edit('document-types.xml', (xml) =>
    xml
      .replace('version="9.7"', 'version="9.8"')
      .replace(`name="${INVOICE_NAME}"`, `name="${INVOICE_NAME} (2026 edition)"`)
      .replace(
        /(name="Peppol BIS Billing UBL Invoice V3 \(2026 edition\)"[\s\S]*?)<process-id scheme="cenbii-procid-ubl" value="urn:peppol:france:billing:regulated" \/>\s*/,
        `$1<process-id scheme="cenbii-procid-ubl" value="${NEW_PROCESS}" />\n    `,
      ),
  );
}

async function participantState() {
  return t.db.query(
    `SELECT pa.*, (SELECT json_agg(p.value ORDER BY p.value) FROM participant_processes pp JOIN processes p ON p.id = pp.process_id
                    WHERE pp.participant_id = pa.id) AS processes
       FROM participants pa ORDER BY pa.id`,
  );
}

beforeAll(async () => {
  t = await startTestApp();
  newer = await mkdtemp(join(tmpdir(), 'registry-codelists-9.8-'));
  await writeNewerRelease(newer);
  await loadCatalogue(t.db, (await readCodeLists([CODE_LISTS])).catalogue);
  const [participant] = await t.db.query<{ id: string }>(
    `INSERT INTO participants (service_provider_id, icd, organization_identifier, name, registration_date,
                               last_modification_date, contact_name)
     VALUES ($1, '0192', '987654325', 'Ordering Customer AS', '2024-01-02', '2024-01-03', 'Kari') RETURNING id`,
    [t.fixture.serviceProviderId],
  );
  await t.db.query(
    `INSERT INTO participant_processes (participant_id, process_id, icd, organization_identifier)
     SELECT $1, id, '0192', '987654325' FROM processes WHERE value = ANY($2::text[])`,
    [participant?.id, [ORDERING, BILLING]],
  );
});
afterAll(async () => {
  await t.close();
  await rm(newer, { recursive: true, force: true });
});

it('a newer release updates titles, links and deprecations and leaves participants alone', async () => {
  const identifiers = await t.db.query(`SELECT id, scheme, value FROM processes ORDER BY id`);
  const participantsBefore = await participantState();
  const [franceRow] = await t.db.query<{ id: string }>(
    `SELECT id FROM processes WHERE value = 'urn:peppol:france:billing:regulated'`,
  );
  const franceDocumentTypes = async () => {
    const response = await t.app.inject({ url: `/rest/api/processes/${franceRow?.id}` });
    return response.json().documentTypes.map((documentType: { title: string }) => documentType.title);
  };
  expect(await franceDocumentTypes()).toContain(INVOICE_NAME);
  const [{ seq: lastSeq } = { seq: 0 }] = await t.db.query<{ seq: number }>(
    'SELECT coalesce(max(seq), 0)::int AS seq FROM change_log',
  );

  const report = await loadCatalogue(t.db, (await readCodeLists([newer])).catalogue);
  expect(report.processes).toEqual({ added: 1, updated: 1, unchanged: 108 });
  expect(report.documentTypes).toEqual({ added: 0, updated: 1, unchanged: 320 });
  expect(report.links).toEqual({ added: 1, removed: 1 });
  const [invoiceRow] = await t.db.query<{ id: string }>(`SELECT id FROM document_types WHERE title = $1`, [
    `${INVOICE_NAME} (2026 edition)`,
  ]);
  const linkChanges = await t.db.query<{ before: { processIds: string[] }; after: { processIds: string[] } }>(
    `SELECT before, after FROM change_log WHERE seq > $1 AND resource = 'document-type' AND identifier = $2 AND after ? 'processIds'`,
    [lastSeq, invoiceRow?.id],
  );
  expect(linkChanges).toHaveLength(1);
  expect(linkChanges[0]?.before.processIds).toContain(franceRow?.id);
  expect(linkChanges[0]?.after.processIds).not.toContain(franceRow?.id);
  // The loader runs where no request waits (the command line): this instance hears the log's signal.
  await t.app.changes.catchUp();
  expect(await franceDocumentTypes()).not.toContain(INVOICE_NAME);

  const ordering = await t.app.inject({ url: '/rest/api/processes', query: { query: ORDERING } });
  expect(ordering.json().content).toEqual([expect.objectContaining({ restricted: true, visible: true })]);
  const invoice = await t.app.inject({ url: '/rest/api/processes', query: { query: NEW_PROCESS } });
  expect(invoice.json().content[0].documentTypes).toEqual([
    expect.objectContaining({ title: `${INVOICE_NAME} (2026 edition)` }),
  ]);
  const france = await t.app.inject({
    url: '/rest/api/processes',
    query: { query: 'urn:peppol:france:billing:regulated' },
  });
  expect(
    france.json().content[0].documentTypes.map((documentType: { title: string }) => documentType.title),
  ).not.toContain(`${INVOICE_NAME} (2026 edition)`);

  expect(await participantState()).toEqual(participantsBefore);
  const kept = await t.db.query(`SELECT id, scheme, value FROM processes WHERE value <> $1 ORDER BY id`, [NEW_PROCESS]);
  expect(kept).toEqual(identifiers);
  expect((await catalogueSources(t.db)).find((source) => source.list === 'processes')?.version).toBe('9.8');
});

it('refuses to go back to an older release unless told to', async () => {
  const before = await t.db.query(`SELECT id, restricted FROM processes ORDER BY id`);
  const older = (await readCodeLists([CODE_LISTS])).catalogue;
  await expect(loadCatalogue(t.db, older)).rejects.toThrow(
    new OlderReleaseError('The document-types list 9.7 is older than the loaded 9.8: nothing loaded.'),
  );
  expect(await t.db.query(`SELECT id, restricted FROM processes ORDER BY id`)).toEqual(before);

  const report = await loadCatalogue(t.db, older, { allowOlder: true });
  expect(report.processes).toMatchObject({ updated: 1 });
  expect((await catalogueSources(t.db)).find((source) => source.list === 'processes')?.version).toBe('9.7');
  expect([
    compareVersions('9.10', '9.9') > 0,
    compareVersions('9.7', '9.7.0'),
    compareVersions('8', '9.7') < 0,
  ]).toEqual([true, 0, true]);
});
