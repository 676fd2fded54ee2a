import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedKey, SmpKeys } from '../../src/smp/keys.js';
import { addTransportProfile, asAdmin, expectStatus } from '../helpers/administration.js';
import { basic, startTestApp, type TestApp } from '../helpers/app.js';
import { axeViolations, launchChromium } from '../helpers/browser.js';
import { addProcess } from '../helpers/catalogue.js';
import { base64Der, testCertificate } from '../helpers/certificates.js';
import { CONSOLE_ROOT, consoleOpener, WIDTHS } from '../helpers/console.js';
import { testDatabaseKind } from '../helpers/database.js';
import { testOutputDir } from '../helpers/openapi-tools.js';
import { uniqueOrganization } from '../helpers/participants.js';
import { metadataPath, useAccessPointOf } from '../helpers/smp.js';

const DOCUMENT_TYPE =
  'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:test:browser:invoice::2.1';
const PROCESS = 'cenbii-procid-ubl::urn:test:browser:billing';

/**
 * The whole catalogue edited in the console, in Chromium: the authority adds an access point with two endpoints, a
 * capability, a document type and a process carrying both, links a document type to another process and a process to
 * what it depends on; a provider registers a participant with the new process, found by its document type's name; the
 * SMP publishes it at both endpoints; the audit trail tells it in words.
 */
describe('the catalogue edited in the console, published by the SMP', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let ordering: { identifier: string };
  const problems: string[] = [];
  const shots = testOutputDir(`web-console-catalogue-${testDatabaseKind}`);
  const open = consoleOpener(
    () => browser,
    () => base,
    problems,
  );
  const read = async (url: string) => expectStatus(await asAdmin(t).get(url), 200);

  beforeAll(async () => {
    const pems = await testCertificate('smp.browser.example');
    t = await startTestApp({
      console: { root: CONSOLE_ROOT },
      signInThrottle: { maxFailures: 2, freeFailures: 100 },
      smp: { keys: new SmpKeys(checkedKey(pems.key, pems.cert, true)), publicUrl: 'https://smp.browser.example' },
    });
    await addTransportProfile(t, { value: 'browser-as4-v2', title: 'Browser AS4' });
    await addTransportProfile(t, { value: 'browser-as4-v3', title: 'Browser AS4 next' });
    ordering = await addProcess(t.app, t.users.authority, {
      title: 'Browser ordering',
      qualifiedIdentifier: 'cenbii-procid-ubl::urn:test:browser:ordering',
    });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Chooses `title` in the link picker `legend` of `form`, found by the filter. */
  const choose = async (form: Locator, legend: string, title: string) => {
    const picker = form.getByRole('group', { name: legend, exact: true });
    await picker.getByRole('searchbox').fill(title);
    await picker.getByRole('button', { name: `Add: ${title}`, exact: true }).click();
    await expect.poll(() => picker.locator('ul.chosen').innerText()).toContain(title);
  };
  const addRow = (page: Page, title: string) => page.locator('tbody tr', { hasText: title });

  it('an access point with two endpoints: added, edited (each keeps its certificate), published at both', async () => {
    const [one, two] = [await testCertificate('one.browser.example'), await testCertificate('two.browser.example')];
    const { context, page } = await open('#/access-points', { user: t.users.authority });
    await page.getByText('Add an access point').click();
    const form = page.locator('#access-point-form');
    await form.getByLabel('Title').fill('Two-door access point');
    await form.getByLabel('Provider').selectOption({ label: 'Test AP Provider' });
    const first = form.getByRole('group', { name: 'Endpoint 1' });
    await first.getByLabel('URL', { exact: true }).fill('https://one.browser.example/as4');
    await first.getByLabel('Transport profile').selectOption({ label: 'Browser AS4 (browser-as4-v2)' });
    await first.getByLabel('Certificate', { exact: true }).fill(one.cert);
    await form.getByRole('button', { name: 'Add an endpoint' }).click();
    const second = form.getByRole('group', { name: 'Endpoint 2' });
    await second.getByLabel('URL', { exact: true }).fill('https://two.browser.example/as4');
    await second.getByLabel('Transport profile').selectOption({ label: 'Browser AS4 next (browser-as4-v3)' });
    await second.getByLabel('Certificate', { exact: true }).fill(two.cert);
    await page.screenshot({ path: join(shots, 'access-point-two-endpoints-desktop.png'), fullPage: true });
    expect(await axeViolations(page, 'access point form with two endpoints')).toEqual([]);
    await form.getByRole('button', { name: 'Add', exact: true }).click();
    await expect
      .poll(() => addRow(page, 'Two-door access point').innerText())
      .toMatch(/one\.browser\.example.*two\.browser\.example/s);
    const stored = (await read('/rest/api/accessPoints?size=2000')).content.find(
      (point: { title: string }) => point.title === 'Two-door access point',
    );
    expect(
      stored.endpoints.map((endpoint: { url: string; certificate: string; transportProfile: { value: string } }) => [
        endpoint.url,
        endpoint.transportProfile.value,
        endpoint.certificate,
      ]),
    ).toEqual([
      ['https://one.browser.example/as4', 'browser-as4-v2', base64Der(one.cert)],
      ['https://two.browser.example/as4', 'browser-as4-v3', base64Der(two.cert)],
    ]);

    // Edited in place: the second endpoint's description changes, and each endpoint keeps the certificate it has.
    await addRow(page, 'Two-door access point').getByRole('button', { name: 'Edit Two-door access point' }).click();
    const edit = page.locator('#access-point-edit-form');
    await edit.getByRole('group', { name: 'Endpoint 2' }).getByLabel('Service description').fill('The second door');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(async () => (await read(`/rest/api/accessPoints/${stored.identifier}`)).endpoints[1].serviceDescription)
      .toBe('The second door');
    const edited = await read(`/rest/api/accessPoints/${stored.identifier}`);
    expect(edited.endpoints.map((endpoint: { certificate: string }) => endpoint.certificate)).toEqual([
      base64Der(one.cert),
      base64Der(two.cert),
    ]);
    await context.close();
    await useAccessPointOf(t, t.fixture.serviceProviderId, stored.identifier);
  }, 90_000);

  it('the authority adds a capability, a document type and a process with both; a provider registers it; the SMP publishes it', async () => {
    const { context, page } = await open('#/catalogue-admin', { user: t.users.authority });
    await page.getByText('Add a capability').click();
    await page.locator('#capability-form').getByLabel('Title').fill('Browser e-invoicing');
    await page.locator('#capability-form').getByRole('button', { name: 'Add', exact: true }).click();
    await addRow(page, 'Browser e-invoicing').waitFor();

    await page.getByText('Add a document type').click();
    const typeForm = page.locator('#document-type-form');
    await typeForm.getByRole('textbox', { name: 'Identifier', exact: true }).fill(DOCUMENT_TYPE);
    await typeForm.getByRole('textbox', { name: 'Title', exact: true }).fill('Browser invoice');
    await typeForm.getByRole('button', { name: 'Add', exact: true }).click();
    await addRow(page, 'Browser invoice').waitFor();

    // The process form, opened after: its choices hold what was just added.
    await page.getByText('Add a process').click();
    const form = page.locator('#process-form');
    await form.getByRole('textbox', { name: 'Identifier', exact: true }).fill(PROCESS);
    await form.getByRole('textbox', { name: 'Title', exact: true }).fill('Browser billing');
    await form.getByLabel('Domain').fill('POAC');
    await choose(form, 'Document types', 'Browser invoice');
    await choose(form, 'Capabilities', 'Browser e-invoicing');
    await page.screenshot({ path: join(shots, 'process-form-links-desktop.png'), fullPage: true });
    expect(await axeViolations(page, 'process form with its links')).toEqual([]);
    await form.getByRole('button', { name: 'Add', exact: true }).click();
    await expect.poll(() => addRow(page, 'Browser billing').innerText()).toContain('Browser invoice');
    const billing = (await read(`/rest/api/processes?query=${encodeURIComponent('urn:test:browser:billing')}`))
      .content[0];
    expect(billing.documentTypes.map((type: { qualifiedIdentifier: string }) => type.qualifiedIdentifier)).toEqual([
      DOCUMENT_TYPE,
    ]);
    expect(billing.capabilities.map((capability: { title: string }) => capability.title)).toEqual([
      'Browser e-invoicing',
    ]);
    // The add form starts empty again: its links too.
    expect(await form.locator('ul.chosen li').count()).toBe(0);

    // A document type's processes: the invoice goes with ordering as well.
    await addRow(page, 'Browser invoice').getByRole('button', { name: 'Edit Browser invoice' }).click();
    const typeEdit = page.locator('#document-type-edit-form');
    expect(await typeEdit.locator('ul.chosen').innerText()).toContain('Browser billing');
    await choose(typeEdit, 'Processes', 'Browser ordering');
    await typeEdit.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(async () =>
        (await read(`/rest/api/processes/${ordering.identifier}`)).documentTypes.map(
          (type: { title: string }) => type.title,
        ),
      )
      .toEqual(['Browser invoice']);

    // A process's dependencies: ordering depends on billing; the links it has stay as they are.
    await page.getByLabel('Search').fill('Browser ordering');
    await addRow(page, 'Browser ordering').getByRole('button', { name: 'Edit Browser ordering' }).click();
    const processEdit = page.locator('#process-edit-form');
    expect(
      await processEdit.getByRole('group', { name: 'Document types', exact: true }).locator('ul.chosen').innerText(),
    ).toContain('Browser invoice');
    await choose(processEdit, 'Depends on', 'Browser billing');
    await page.screenshot({ path: join(shots, 'process-edit-dependencies-desktop.png') });
    expect(await axeViolations(page, 'process edit dialog with its links')).toEqual([]);
    await processEdit.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(async () =>
        (await read(`/rest/api/processes/${ordering.identifier}`)).dependencies.map(
          (process: { title: string }) => process.title,
        ),
      )
      .toEqual(['Browser billing']);
    expect(
      (await read(`/rest/api/processes/${ordering.identifier}`)).documentTypes.map(
        (type: { title: string }) => type.title,
      ),
    ).toEqual(['Browser invoice']);
    await context.close();

    // The provider finds the process by its document type's name and registers a participant with it.
    const provider = await open('#/participants/new', { user: t.users.serviceProvider });
    await provider.page.getByLabel('Filter by name, domain, identifier or document type').fill('browser invoice');
    const candidates = provider.page.locator('ul.candidates > li');
    await expect
      .poll(() => candidates.allInnerTexts())
      .toContainEqual(expect.stringMatching(/Browser billing\s+Post-award procurement/));
    await candidates
      .filter({ hasText: 'Browser billing' })
      .getByRole('button', { name: 'Add: Browser billing' })
      .click();
    const organization = uniqueOrganization();
    await provider.page.getByLabel('Organization number').fill(organization);
    await provider.page.getByLabel('Organization name').fill('Nettleser Faktura AS');
    await provider.page.getByLabel('Contact name').fill('Kari Nordmann');
    await provider.page.getByRole('button', { name: 'Save' }).click();
    const participant = `iso6523-actorid-upis::0192:${organization}`;
    await expect
      .poll(() => provider.page.getByRole('status').filter({ hasText: 'Saved:' }).innerText())
      .toContain(participant);
    await provider.context.close();

    // Published: the service group names the document type, its metadata both endpoints of the access point.
    const group = await t.app.inject(`/${encodeURIComponent(participant)}`);
    expect(group.statusCode, group.body).toBe(200);
    expect(decodeURIComponent(group.body)).toContain(DOCUMENT_TYPE);
    const metadata = await t.app.inject(metadataPath(participant, DOCUMENT_TYPE));
    expect(metadata.statusCode, metadata.body).toBe(200);
    expect(metadata.body).toContain('urn:test:browser:billing');
    expect([...metadata.body.matchAll(/<wsa:Address>([^<]*)</g)].map((match) => match[1])).toEqual([
      'https://one.browser.example/as4',
      'https://two.browser.example/as4',
    ]);
  }, 120_000);

  it('the audit trail tells in words what was added, by name, with every field one click away', async () => {
    const { context, page } = await open('#/audit', { user: t.users.authority });
    await page.getByLabel('Resource').selectOption({ label: 'Process' });
    await page.getByRole('button', { name: 'Filter' }).click();
    const created = page.locator('tbody tr', { hasText: 'Browser billing' }).filter({ hasText: 'Created' });
    await expect
      .poll(() => created.locator('ul.summary li').allTextContents())
      .toEqual(['Capabilities: Browser e-invoicing', 'Document types: Browser invoice']);
    const changed = page.locator('tbody tr', { hasText: 'Browser ordering' }).filter({ hasText: 'Changed' });
    await expect
      .poll(() => changed.locator('ul.summary li').allTextContents())
      .toContainEqual('Depends on added: Browser billing');
    // The JSON paths are the detail, folded.
    expect(await created.locator('details').getAttribute('open')).toBeNull();
    expect(await created.locator('details summary').innerText()).toMatch(/fields changed/);

    await page.getByLabel('Resource').selectOption({ label: 'Participant' });
    await page.getByRole('button', { name: 'Filter' }).click();
    const participant = page.locator('tbody tr', { hasText: 'Nettleser Faktura AS' });
    await expect
      .poll(() => participant.locator('ul.summary li').allTextContents())
      .toEqual(['Processes: Browser billing']);
    await page.screenshot({ path: join(shots, 'audit-summary-desktop.png'), fullPage: true });
    expect(await axeViolations(page, 'audit trail in words')).toEqual([]);
    await page.setViewportSize({ width: WIDTHS.phone, height: 900 });
    await page.screenshot({ path: join(shots, 'audit-summary-phone.png'), fullPage: true });
    await context.close();

    // A sign-in lock's lift names whose lock it was, and the ADMIN who lifted it.
    const locked = t.users.otherServiceProvider.username;
    for (const attempt of ['first', 'second']) {
      await t.app.inject({
        url: '/rest/api/processes',
        headers: { authorization: basic(locked, `wrong-${attempt}-password`) },
        remoteAddress: '203.0.113.48',
      });
    }
    // Stored a moment after the refusal, for every instance.
    await expect.poll(async () => (await read(`/rest/api/sign-in-locks?username=${locked}`)).content.length).toBe(1);
    const [lock] = (await read(`/rest/api/sign-in-locks?username=${locked}`)).content;
    expectStatus(
      await t.app.inject({
        method: 'DELETE',
        url: `/rest/api/sign-in-locks/${lock.identifier}`,
        headers: { authorization: t.users.admin.authorization },
      }),
      204,
    );
    const admin = await open('#/audit', { user: t.users.admin });
    await admin.page.getByLabel('Resource').selectOption({ label: 'Sign-in lock' });
    await admin.page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(() => admin.page.locator('tbody tr').allInnerTexts())
      .toEqual([
        expect.stringMatching(
          new RegExp(
            `Sign-in lock\\s+Lifted\\s+${locked} from 203\\.0\\.113\\.48\\s+${lock.identifier}\\s+admin \\(ADMIN\\)`,
          ),
        ),
      ]);
    await admin.context.close();
    expect(problems).toEqual([]);
  }, 90_000);
});
