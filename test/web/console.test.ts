import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BILLING_PROCESS } from '../../src/setup/demo.js';
import { loadCatalogue } from '../../src/code-lists/repository.js';
import { starterCatalogue } from '../../src/setup/starter-catalogue.js';
import { addProcess } from '../helpers/catalogue.js';
import { CONSOLE_CSP } from '../../src/web/plugin.js';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { axeViolations, launchChromium } from '../helpers/browser.js';
import { testDatabaseKind } from '../helpers/database.js';
import { testOutputDir } from '../helpers/openapi-tools.js';
import { CONSOLE_ROOT, consoleOpener, settled, WIDTHS } from '../helpers/console.js';
import { addParticipant, uniqueOrganization } from '../helpers/participants.js';
import { startLocalSml } from '../../dev/local-sml.js';
import { MIGRATION_KEY_PATTERN, smlClient } from '../../src/network/sml-client.js';
import { base64Der, expiredCertificate, testCertificate } from '../helpers/certificates.js';
import { MAX_LOCKS_PER_ADDRESS, storeLock } from '../../src/sign-in-locks/sign-in-locks.js';

/** Every page of the console, as the role that sees it. */
const PAGES: Array<{ name: string; hash: string; as: 'anonymous' | 'provider' | 'admin'; ready: string }> = [
  { name: 'lookup', hash: '#/lookup', as: 'anonymous', ready: 'h1' },
  { name: 'catalogue', hash: '#/catalogue', as: 'anonymous', ready: 'tbody tr:not(.placeholder)' },
  { name: 'sign-in', hash: '#/sign-in', as: 'anonymous', ready: 'form' },
  { name: 'participants', hash: '#/participants', as: 'provider', ready: 'tbody tr:not(.placeholder)' },
  { name: 'participant-new', hash: '#/participants/new', as: 'provider', ready: '.candidates li' },
  { name: 'participants-authority', hash: '#/participants', as: 'admin', ready: 'tbody tr:not(.placeholder)' },
  { name: 'import', hash: '#/import', as: 'provider', ready: 'form' },
  { name: 'service-providers', hash: '#/service-providers', as: 'admin', ready: 'tbody tr:not(.placeholder)' },
  {
    name: 'access-point-providers',
    hash: '#/access-point-providers',
    as: 'admin',
    ready: 'tbody tr:not(.placeholder)',
  },
  { name: 'access-points', hash: '#/access-points', as: 'admin', ready: 'tbody tr:not(.placeholder)' },
  { name: 'transport-profiles', hash: '#/transport-profiles', as: 'admin', ready: 'tbody tr:not(.placeholder)' },
  { name: 'users', hash: '#/users', as: 'admin', ready: 'tbody tr:not(.placeholder)' },
  { name: 'catalogue-admin', hash: '#/catalogue-admin', as: 'admin', ready: '.release dd' },
  { name: 'audit', hash: '#/audit', as: 'admin', ready: 'tbody tr:not(.placeholder)' },
  { name: 'audit-provider', hash: '#/audit', as: 'provider', ready: 'tbody tr:not(.placeholder)' },
  { name: 'deliveries', hash: '#/deliveries', as: 'admin', ready: 'tbody tr:not(.placeholder)' },
  { name: 'status', hash: '#/status', as: 'admin', ready: '#attention-heading' },
  { name: 'password', hash: '#/password', as: 'provider', ready: '#password-form' },
];

describe('the web console in Chromium, against the real service', () => {
  let test: TestApp;
  let browser: Browser;
  let base: string;
  const problems: string[] = [];
  const shots = testOutputDir(`web-console-${testDatabaseKind}`);
  let dependentProcess: string;

  beforeAll(async () => {
    // An SML nobody answers at: the deliveries page has a failure to show. The retry waits long enough to stay failed.
    test = await startTestApp({
      console: { root: CONSOLE_ROOT },
      sml: { url: 'http://127.0.0.1:9/', smpId: 'TEST-SMP', timeoutMs: 500 },
      delivery: { retryMs: { first: 600_000, max: 600_000 } },
    });
    await loadCatalogue(test.db, await starterCatalogue());
    // A process with a required ICD and a dependency, to see the rules as hints.
    const billing = (
      await test.app.inject({ url: `/rest/api/processes?query=${encodeURIComponent('poacc:billing')}` })
    ).json().content[0];
    const added = await test.app.inject({
      method: 'POST',
      url: '/rest/api/processes',
      headers: { authorization: test.users.admin.authorization },
      payload: {
        domain: 'test',
        title: 'Norwegian reminder',
        qualifiedIdentifier: 'cenbii-procid-ubl::urn:test:reminder',
        restricted: false,
        visible: true,
        capabilities: [],
        documentTypes: [],
        dependencies: [{ identifier: billing.identifier }],
        requiredICDs: ['0192'],
      },
    });
    expect(added.statusCode, added.body).toBe(201);
    dependentProcess = added.json().identifier;
    // Every page test finds rows of its own: a few participants of provider one.
    for (const name of ['Fjord Fisk AS', 'Bergen Bakst AS', 'Oslo Ost AS']) {
      await addParticipant(test.app, test.users.serviceProvider, {
        name,
        processes: [{ qualifiedIdentifier: BILLING_PROCESS }],
      });
    }
    base = await test.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await test?.close();
  });

  const open = consoleOpener(
    () => browser,
    () => base,
    problems,
  );

  const userOf = (role: 'anonymous' | 'provider' | 'admin') =>
    role === 'provider' ? test.users.serviceProvider : role === 'admin' ? test.users.admin : undefined;

  it("serves the page at / with a same-origin CSP, its assets under /assets/, and leaves the API's headers as they were", async () => {
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) expect(asset).toMatch(/^\/assets\//);
    // Its icon, so no browser asks for a /favicon.ico that is not there.
    const icon = html.match(/<link rel="icon" type="image\/svg\+xml" href="([^"]+)"/)?.[1];
    expect(icon).toMatch(/^\/assets\/favicon-.+\.svg$/);
    const iconFile = await fetch(`${base}${icon}`);
    expect([iconFile.status, iconFile.headers.get('content-type')]).toEqual([
      200,
      expect.stringMatching(/^image\/svg\+xml/),
    ]);
    expect(html).not.toMatch(/<script>(?!<\/script>)|<style>| on\w+="/);
    const api = await fetch(`${base}/rest/api/processes`);
    expect(api.headers.get('content-security-policy')).toBeNull();
    expect(api.headers.get('x-frame-options')).toBe('DENY');
    // Root-level paths that are no file stay the SMP's: answered by it (this app has no SMP key: 503), never the page.
    const lookup = await fetch(`${base}/iso6523-actorid-upis::0192:987654325`);
    expect(lookup.status).toBe(503);
    expect(lookup.headers.get('content-type')).not.toMatch(/html/);
    expect(lookup.headers.get('content-security-policy')).toBeNull();
  });

  it('public lookup: an organization by ICD and number shows what it can receive and links to its SMP lookup', async () => {
    const organization = uniqueOrganization();
    await addParticipant(test.app, test.users.serviceProvider, {
      organizationIdentifier: organization,
      processes: [{ qualifiedIdentifier: BILLING_PROCESS }],
    });
    const { context, page } = await open('#/lookup');
    await page.getByLabel('ICD').fill('0192');
    // As the national register prints it, in groups of three: the console leaves the blanks out.
    await page.getByLabel('Organization number').fill(organization.replace(/(\d{3})(?=\d)/g, '$1 '));
    await page.getByRole('button', { name: 'Find' }).click();
    const participantId = `iso6523-actorid-upis::0192:${organization}`;
    await expect.poll(() => page.locator('.result').innerText()).toContain('Peppol BIS Billing');
    // Since when: the day the participant was given the process, for the process and its document types.
    const since = `since ${new Date().toLocaleDateString('en-GB', { timeZone: 'UTC', dateStyle: 'medium' })}`;
    expect(await page.locator('.result li', { hasText: 'Peppol BIS Billing 3.0' }).first().innerText()).toContain(
      since,
    );
    expect(
      await page.locator('.result li', { hasText: 'Peppol BIS Billing UBL Invoice V3' }).last().innerText(),
    ).toContain(since);
    await page.screenshot({ path: join(shots, 'lookup-result-desktop.png'), fullPage: true });
    await page.setViewportSize({ width: WIDTHS.phone, height: 900 });
    await page.screenshot({ path: join(shots, 'lookup-result-phone.png'), fullPage: true });
    await page.setViewportSize({ width: WIDTHS.desktop, height: 900 });
    expect(await page.getByRole('link', { name: 'SMP lookup' }).getAttribute('href')).toBe(`/${participantId}`);

    await page.getByLabel('Organization number').fill('000000001');
    await page.getByRole('button', { name: 'Find' }).click();
    await expect.poll(() => page.locator('.result').innerText()).toContain('No participant is registered');

    await page.evaluate(() => {
      location.hash = '#/catalogue';
    });
    await page.getByLabel('Search').fill('reminder');
    await expect
      .poll(() => page.locator('table').first().locator('tbody tr').allInnerTexts())
      .toEqual([expect.stringContaining('Norwegian reminder')]);
    // Norwegian bokmål texts, tagged as such from the first moment they are on the page.
    await page.evaluate(() => {
      const seen: string[] = [];
      Object.assign(window, { languageAtEachChange: seen });
      new MutationObserver(() => seen.push(document.documentElement.lang)).observe(document.body, {
        subtree: true,
        childList: true,
        characterData: true,
      });
    });
    await page.getByLabel('Language').selectOption('nb');
    await expect.poll(() => page.locator('h1').innerText()).toBe('Katalog');
    expect(await page.locator('html').getAttribute('lang')).toBe('nb');
    const languageAtEachChange = await page.evaluate(
      () => (window as unknown as { languageAtEachChange: string[] }).languageAtEachChange,
    );
    expect(languageAtEachChange.length).toBeGreaterThan(0);
    expect(new Set(languageAtEachChange)).toEqual(new Set(['nb']));
    // The language chosen stays across a reload.
    await page.reload();
    await expect.poll(() => page.locator('h1').innerText()).toBe('Katalog');
    await context.close();
  });

  it('provider: adds (rules shown, API errors at their field), edits, transfers and deletes a participant', async () => {
    const { context, page } = await open('#/participants', { user: test.users.serviceProvider });
    await page.getByRole('link', { name: 'Add a participant' }).click();
    // The picker: the reminder cannot be added before what it depends on, and only with ICD 0192.
    await page.getByLabel('Filter by name, domain, identifier or document type').fill('reminder');
    const candidates = page.locator('ul.candidates > li');
    await expect
      .poll(() => candidates.allInnerTexts())
      .toEqual([
        expect.stringMatching(/Norwegian reminder.*Cannot be added now: Also needs: Peppol BIS Billing 3\.0\./s),
      ]);
    await page.getByLabel('ICD').fill('0007');
    await expect.poll(() => candidates.first().innerText()).toContain('Needs one of the ICDs 0192.');
    await page.getByLabel('ICD').fill('0192');
    // Added with what it depends on, in one step; both show as chosen, apart from what can be added.
    await candidates.first().getByRole('button', { name: 'Add with Peppol BIS Billing 3.0' }).click();
    const chosen = page.locator('ul.chosen > li');
    await expect
      .poll(() => chosen.allInnerTexts())
      .toEqual([expect.stringContaining('Peppol BIS Billing 3.0'), expect.stringContaining('Norwegian reminder')]);
    expect(await page.getByRole('status').filter({ hasText: 'Added:' }).innerText()).toContain(
      'Added: Peppol BIS Billing 3.0, Norwegian reminder.',
    );

    const organization = uniqueOrganization();
    await page.getByLabel('Organization number').fill(organization);
    await page.getByLabel('Organization name').fill('Browser Bakery AS');
    await page.getByLabel('Contact name').fill('Kari Nordmann');
    // The browser's own check is bypassed so that the API's message is what shows.
    await page.locator('form').evaluate((form) => form.setAttribute('novalidate', ''));
    await page.getByLabel('Email').fill('not-an-email');
    await page.getByRole('button', { name: 'Save' }).click();
    const emailError = page.locator('.field', { has: page.getByLabel('Email') }).locator('.field-error');
    await expect.poll(() => emailError.innerText()).toMatch(/email/i);
    expect(await page.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');
    // In plain words: no form object of the API's, no "Validation failed for object=…".
    expect(await page.getByRole('alert').innerText()).toBe('Nothing was saved: check the marked fields.');
    expect(await page.locator('main').innerText()).not.toMatch(/DTO|Validation failed|objectName/);
    await page.getByLabel('Email').fill('kari@bakery.example');
    // The message was about what the field held: it goes as the field changes, and the form's with it.
    expect(await emailError.count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.getByRole('button', { name: 'Save' }).click();
    // The list it returns to confirms what was saved, until the situation changes (a search).
    const saved = page.getByRole('status').filter({ hasText: 'Saved:' });
    await expect
      .poll(() => saved.innerText())
      .toBe(`Saved: Browser Bakery AS (iso6523-actorid-upis::0192:${organization}).`);

    await page.getByLabel('Search').fill(organization);
    const row = page.locator('tbody tr', { hasText: organization });
    await row.waitFor();
    expect(await saved.count()).toBe(0);
    expect(await row.innerText()).toContain('Browser Bakery AS');

    await row.getByRole('link', { name: /Edit/ }).click();
    await expect.poll(() => page.getByLabel('Contact name').inputValue()).toBe('Kari Nordmann');
    await page.getByLabel('Contact name').fill('Ola Nordmann');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByLabel('Search').fill(organization);
    await expect.poll(() => row.innerText()).toContain('Ola Nordmann');
    const stored = await test.app.inject({
      url: `/rest/api/participants/iso6523-actorid-upis::0192:${organization}`,
      headers: { authorization: test.users.serviceProvider.authorization },
    });
    expect(stored.json().contact.name).toBe('Ola Nordmann');
    expect(stored.json().processes.map((process: { identifier: string }) => process.identifier)).toContain(
      dependentProcess,
    );

    await row.getByRole('button', { name: /Transfer/ }).click();
    await page.getByLabel('Transfer to').selectOption({ label: 'Provider Two' });
    await page.getByRole('dialog').getByRole('button', { name: 'Transfer' }).click();
    await expect.poll(() => page.getByRole('status').first().innerText()).toBe('Transferred.');
    await expect.poll(() => page.locator('tbody tr', { hasText: organization }).count()).toBe(0);
    const moved = await test.app.inject({
      url: `/rest/api/participants/iso6523-actorid-upis::0192:${organization}`,
      headers: { authorization: test.users.otherServiceProvider.authorization },
    });
    expect(moved.statusCode).toBe(200);

    const doomed = await addParticipant(test.app, test.users.serviceProvider, { name: 'Doomed Dairy AS' });
    await page.getByLabel('Search').fill(doomed.organizationIdentifier);
    const doomedRow = page.locator('tbody tr', { hasText: doomed.organizationIdentifier });
    await doomedRow.getByRole('button', { name: /Delete/ }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.innerText()).toContain('Doomed Dairy AS');
    // Focus starts on Cancel: an Enter pressed out of habit deletes nothing.
    await expect
      .poll(() =>
        dialog.getByRole('button', { name: 'Cancel' }).evaluate((button) => button === document.activeElement),
      )
      .toBe(true);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(
      (
        await test.app.inject({
          url: `/rest/api/participants/${doomed.identifier}`,
          headers: { authorization: test.users.serviceProvider.authorization },
        })
      ).statusCode,
    ).toBe(200);
    await doomedRow.getByRole('button', { name: /Delete/ }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.locator('tbody tr', { hasText: doomed.organizationIdentifier }).count()).toBe(0);
    expect(
      (
        await test.app.inject({
          url: `/rest/api/participants/${doomed.identifier}`,
          headers: { authorization: test.users.serviceProvider.authorization },
        })
      ).statusCode,
    ).toBe(404);
    await context.close();
  });

  it('provider: imports a JSON lines file with one bad line, with progress and a report per line', async () => {
    const [first, second] = [uniqueOrganization(), uniqueOrganization()];
    const line = (organizationIdentifier: string, email = 'ops@import.example') =>
      JSON.stringify({
        icd: '0192',
        organizationIdentifier,
        name: `Imported ${organizationIdentifier}`,
        contact: { name: 'Importer', email },
        processes: [{ qualifiedIdentifier: BILLING_PROCESS }],
      });
    // The last line is the first again: already present, as the command line's import calls it.
    const file = [line(first), line(uniqueOrganization(), 'bad address'), '', line(second), line(first)].join('\n');
    const { context, page } = await open('#/import', { user: test.users.serviceProvider });
    await page
      .getByLabel('File')
      .setInputFiles({ name: 'participants.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(file) });
    await page.getByRole('button', { name: 'Start import' }).click();
    await expect
      .poll(() => page.locator('.progress-row').innerText(), { timeout: 10_000 })
      .toContain('2 imported, 1 already present, 1 refused, of 4 lines.');
    expect(
      await page
        .getByRole('progressbar', { name: 'Import progress' })
        .evaluate((bar: HTMLProgressElement) => [bar.value, bar.max]),
    ).toEqual([4, 4]);
    const rows = await page.locator('tbody tr').allInnerTexts();
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatch(/^1\s+✓ Imported/);
    expect(rows[1]).toMatch(/^2\s+✗ Refused: Nothing was saved from this line:\s+Email: Not an email address/s);
    expect(rows[2]).toMatch(/^4\s+✓ Imported/);
    expect(rows[3]).toMatch(/^5\s+✓ Already present/);
    for (const organization of [first, second]) {
      const stored = await test.app.inject({
        url: `/rest/api/participants/iso6523-actorid-upis::0192:${organization}`,
        headers: { authorization: test.users.serviceProvider.authorization },
      });
      expect(stored.statusCode).toBe(200);
    }

    // The export holds the provider's participants, one JSON line each.
    await page.evaluate(() => {
      location.hash = '#/participants';
    });
    // One click: the file is collected and downloaded.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download participants.jsonl' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('participants.jsonl');
    const exported = readFileSync(await download.path(), 'utf8');
    const organizations = exported
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text).organizationIdentifier);
    expect(organizations).toEqual(expect.arrayContaining([first, second]));
    await context.close();
  }, 60_000);

  it('authority: adds an access point with a certificate (expiry shown), edits it in place, and adds and edits a user', async () => {
    const until = new Date(Date.now() + 200 * 24 * 3600 * 1000);
    const { cert } = await testCertificate('ap.browser.example', new Date(Date.now() - 24 * 3600 * 1000), until);
    const { context, page } = await open('#/access-points', { user: test.users.admin });
    await page.getByText('Add an access point').click();
    const form = page.locator('#access-point-form');
    await form.getByLabel('Title').fill('Browser Access Point');
    await form.getByLabel('Provider').selectOption({ label: 'Test AP Provider' });
    await form.getByLabel('URL', { exact: true }).fill('https://ap.browser.example/as4');
    await form.getByLabel('Transport profile').selectOption({ index: 0 });
    await form.getByLabel('Certificate types').fill('PEPPOL AP G3');
    await form.getByLabel('Service description').fill('Browser AS4 service');
    await form.getByLabel('Technical contact URL').fill('mailto:ops@ap.browser.example');
    await form.getByLabel('Serves from').fill('2026-01-01T00:00:00');
    await form.getByLabel('Serves until').fill('2030-12-31T23:00:00');
    await form.getByLabel('Requires a business-level signature').check();
    // An expired certificate: the API's message shows at the certificate field, and nothing is added.
    await form.getByLabel('Certificate', { exact: true }).fill((await expiredCertificate('old.example')).cert);
    await form.getByRole('button', { name: 'Add', exact: true }).click();
    const certificateError = form
      .locator('.field', { has: page.getByLabel('Certificate', { exact: true }) })
      .locator('.field-error');
    await expect.poll(() => certificateError.innerText()).toMatch(/expired/i);
    await form.getByLabel('Certificate', { exact: true }).fill(cert);
    await form.getByRole('button', { name: 'Add', exact: true }).click();
    const row = page.locator('tbody tr', { hasText: 'Browser Access Point' });
    await row.waitFor();
    expect(await row.innerText()).toMatch(
      new RegExp(
        `https://ap\\.browser\\.example/as4.*peppol-transport-as4-v2_0.*PEPPOL AP G3.*certificate expires ${until.toLocaleDateString('en-GB', { timeZone: 'UTC', dateStyle: 'medium' })}.*Requires a business-level signature`,
        's',
      ),
    );
    const listed = await test.app.inject({
      url: '/rest/api/accessPoints?size=2000',
      headers: { authorization: test.users.admin.authorization },
    });
    const stored = listed.json().content.find((point: { title: string }) => point.title === 'Browser Access Point');
    expect(stored.endpoints[0]).toMatchObject({
      url: 'https://ap.browser.example/as4',
      certificate: base64Der(cert),
      serviceDescription: 'Browser AS4 service',
      technicalContactUrl: 'mailto:ops@ap.browser.example',
      serviceActivationDate: new Date(2026, 0, 1).toISOString(),
      serviceExpirationDate: new Date(2030, 11, 31, 23).toISOString(),
      requireBusinessLevelSignature: true,
    });

    // Edited in place: the dialog holds the current values; the certificate left empty is kept.
    await row.getByRole('button', { name: 'Edit Browser Access Point' }).click();
    const edit = page.locator('#access-point-edit-form');
    expect(await edit.getByLabel('Service description').inputValue()).toBe('Browser AS4 service');
    expect(await edit.getByLabel('Requires a business-level signature').isChecked()).toBe(true);
    expect(await edit.getByLabel('Certificate', { exact: true }).getAttribute('aria-describedby')).toBeTruthy();
    expect(await edit.innerText()).toContain(
      `keep the current certificate (expires ${until.toLocaleDateString('en-GB', { timeZone: 'UTC', dateStyle: 'medium' })})`,
    );
    await page.screenshot({ path: join(shots, 'access-point-edit-desktop.png') });
    expect(await axeViolations(page, 'access point edit dialog')).toEqual([]);
    await edit.getByLabel('Title').fill('Renamed Access Point');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('tbody tr', { hasText: 'Renamed Access Point' }).count()).toBe(1);
    const renamed = (
      await test.app.inject({
        url: `/rest/api/accessPoints/${stored.identifier}`,
        headers: { authorization: test.users.admin.authorization },
      })
    ).json();
    expect(renamed.endpoints).toEqual(stored.endpoints);

    await page.evaluate(() => {
      location.hash = '#/users';
    });
    await page.getByText('Add a user').click();
    const userForm = page.locator('#user-form');
    await userForm.getByLabel('Username').fill('browser-user');
    await userForm.getByLabel('Password').fill('short');
    await userForm.evaluate((element) => element.setAttribute('novalidate', ''));
    await userForm.getByRole('button', { name: 'Add', exact: true }).click();
    await expect
      .poll(() =>
        userForm
          .locator('.field', { has: page.getByLabel('Password') })
          .locator('.field-error')
          .innerText(),
      )
      .toMatch(/12/);
    await userForm.getByLabel('Password').fill('a-long-enough-password');
    await userForm.getByLabel('Provider').selectOption({ label: 'Provider Two' });
    await userForm.getByRole('button', { name: 'Add', exact: true }).click();
    const userRow = page.locator('tbody tr', { hasText: 'browser-user' });
    await expect.poll(() => userRow.innerText()).toMatch(/Service provider\s+Provider Two/);
    await userRow.getByRole('button', { name: 'Edit browser-user' }).click();
    const userEdit = page.locator('#user-edit-form');
    expect(await userEdit.getByLabel('Provider').locator('option:checked').innerText()).toBe('Provider Two');
    await userEdit.getByLabel('Provider').selectOption({ label: 'Provider One' });
    await userEdit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => userRow.innerText()).toMatch(/Service provider\s+Provider One/);
    // The password was left empty: the old one still signs in.
    const signedIn = await fetch(`${base}/rest/api/participants?size=1`, {
      headers: { authorization: `Basic ${Buffer.from('browser-user:a-long-enough-password').toString('base64')}` },
    });
    expect(signedIn.status).toBe(200);
    await context.close();
  }, 90_000);

  it('authority: edits a catalogue process in place, its rules and links kept, under the code-list release', async () => {
    const { context, page } = await open('#/catalogue-admin', { user: test.users.authority });
    await expect.poll(() => page.locator('.release').innerText()).toMatch(/Starter catalogue\s+\S+/);
    await page.getByLabel('Search').fill('reminder');
    const row = page.locator('tbody tr', { hasText: 'Norwegian reminder' });
    await expect.poll(() => page.locator('tbody tr', { hasText: 'reminder' }).count()).toBe(1);
    await row.getByRole('button', { name: 'Edit Norwegian reminder' }).click();
    const edit = page.locator('#process-edit-form');
    expect(await edit.getByLabel('Required ICDs').inputValue()).toBe('0192');
    await edit.getByLabel('Title').fill('Norwegian reminder, edited');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('tbody tr', { hasText: 'Norwegian reminder, edited' }).count()).toBe(1);
    const stored = (await test.app.inject({ url: `/rest/api/processes/${dependentProcess}` })).json();
    expect(stored).toMatchObject({
      title: 'Norwegian reminder, edited',
      requiredICDs: ['0192'],
      restricted: false,
      visible: true,
    });
    expect(stored.dependencies.map((dependency: { title: string }) => dependency.title)).toEqual([
      'Peppol BIS Billing 3.0',
    ]);
    await context.close();
  });

  it('authority: the audit trail filtered by resource and identifier shows before and after; the deliveries page the SML failure', async () => {
    const created = await test.app.inject({
      method: 'POST',
      url: '/rest/api/transport-profiles',
      headers: { authorization: test.users.admin.authorization },
      payload: { value: 'audit-profile-v1', title: 'Audit profile', restricted: false },
    });
    const profile = created.json().identifier as string;
    await test.app.inject({
      method: 'PUT',
      url: `/rest/api/transport-profiles/${profile}`,
      headers: { authorization: test.users.admin.authorization },
      payload: { value: 'audit-profile-v1', title: 'Audit profile renamed', restricted: true },
    });
    const { context, page } = await open('#/audit', { user: test.users.authority });
    await page.getByLabel('Resource').selectOption({ label: 'Transport profile' });
    await page.getByLabel('Identifier').fill(profile);
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(() => page.locator('tbody tr').allInnerTexts())
      .toEqual([expect.stringMatching(/Changed.*admin \(ADMIN\)/s), expect.stringMatching(/Created/)]);
    const update = page.locator('tbody tr').first();
    // In words first, the UUID named by what it stands for; every field one click away.
    expect(await update.locator('td[data-label="Identifier"]').innerText()).toMatch(
      new RegExp(`^Audit profile renamed\\s+${profile}$`),
    );
    expect(await update.locator('ul.summary li').allTextContents()).toEqual([
      'Title: Audit profile → Audit profile renamed',
      'Restricted: false → true',
    ]);
    await update.getByText('2 fields changed').click();
    // Screen readers hear which value is before and which after; the eye sees the arrow and the colours.
    expect(await update.locator('details li').allTextContents()).toEqual([
      'title: before Audit profile → after Audit profile renamed',
      'restricted: before false → after true',
    ]);
    await page.screenshot({ path: join(shots, 'audit-details-desktop.png'), fullPage: true });
    expect(await axeViolations(page, 'audit trail with a change unfolded')).toEqual([]);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBeGreaterThan(2);

    await page.evaluate(() => {
      location.hash = '#/deliveries';
    });
    const sml = page.locator('table').first().locator('tbody tr', { hasText: 'SML' });
    await expect
      .poll(() => sml.innerText(), { timeout: 15_000 })
      .toMatch(/[1-9]\d*\s.*\s[1-9]\d*\s.*The SML could not be reached/is);
    await context.close();

    // A provider's audit trail holds its own participants only, with no resource or provider filter.
    const provider = await open('#/audit', { user: test.users.serviceProvider });
    await provider.page.locator('tbody tr:not(.placeholder)').first().waitFor();
    expect(await provider.page.getByLabel('Resource').count()).toBe(0);
    const resources = await provider.page.locator('td[data-label="Resource"]').allInnerTexts();
    expect(new Set(resources)).toEqual(new Set(['Participant']));
    await provider.page.evaluate(() => {
      location.hash = '#/deliveries';
    });
    await expect.poll(() => provider.page.locator('main').innerText()).toContain('This page is not for your role.');
    await provider.context.close();
  }, 90_000);

  it("a participant's place in the network: pending with the SML's failure on its page, and among the held-up on the deliveries page", async () => {
    // With a process: a participant without one has no part in its organization's registration, and sees none of it.
    const process = await addProcess(test.app, test.users.admin);
    const participant = await addParticipant(test.app, test.users.serviceProvider, {
      name: 'Nettverk Venter AS',
      processes: [{ identifier: process.identifier }],
    });
    const { context, page } = await open(`#/participants/edit/${participant.identifier}`, {
      user: test.users.serviceProvider,
    });
    const place = page.getByRole('region', { name: 'Place in the network' });
    await expect
      .poll(() => place.innerText(), { timeout: 15_000 })
      .toMatch(/SML\s+Pending · Since .*The SML could not be reached; the delivery is tried again by itself\./s);
    expect(await place.innerText()).toMatch(/Peppol Directory\s+Not configured/);
    await page.screenshot({ path: join(shots, 'participant-network-desktop.png'), fullPage: true });
    expect(await axeViolations(page, 'participant edit page with its place in the network')).toEqual([]);
    await context.close();

    const authority = await open('#/deliveries', { user: test.users.authority });
    const row = authority.page.locator('tbody tr', { hasText: participant.qualifiedIdentifier });
    await expect.poll(() => row.innerText(), { timeout: 15_000 }).toMatch(/Pending/);
    // Named, and by whom it is served: not a bare identifier.
    expect((await row.locator('td[data-label="Participant"]').innerText()).split(/\s+/)).toEqual([
      'Nettverk',
      'Venter',
      'AS',
      participant.qualifiedIdentifier,
    ]);
    expect(await row.locator('td[data-label="Served by"]').innerText()).toBe('Provider One');
    await authority.page.screenshot({ path: join(shots, 'deliveries-held-up-desktop.png'), fullPage: true });
    await authority.context.close();
  }, 90_000);

  it('migrations in the console: a key taken over from another SMP, and a key given out once and withdrawn', async () => {
    const sml = await startLocalSml();
    const own = await startTestApp({
      console: { root: CONSOLE_ROOT },
      sml: { url: sml.url, smpId: 'CONSOLE-SMP', timeoutMs: 2000 },
      delivery: { intervalMs: 50 },
    });
    try {
      const at = await own.app.listen({ host: '127.0.0.1', port: 0 });
      const taken = `iso6523-actorid-upis::0192:${uniqueOrganization()}`;
      sml.registrations.set('OTHER-SMP', new Set([taken]));
      await smlClient({ url: sml.url, smpId: 'OTHER-SMP' }).prepareToMigrate(taken, 'aB3$cD4%eF5^gH6!');
      // With a process: the provider's say over the organization's registration.
      const process = await addProcess(own.app, own.users.admin);
      const participant = await addParticipant(own.app, own.users.serviceProvider, {
        organizationIdentifier: taken.split(':').at(-1),
        name: 'Flytter Inn AS',
        processes: [{ identifier: process.identifier }],
      });
      const edit = `#/participants/edit/${participant.identifier}`;
      const smlState = async () =>
        (
          await own.app.inject({
            url: `/rest/api/participants/${participant.identifier}/network`,
            headers: { authorization: own.users.serviceProvider.authorization },
          })
        ).json().sml.state;
      await vi.waitFor(async () => expect(await smlState()).toBe('held_elsewhere'), { timeout: 15_000, interval: 100 });
      const { context, page } = await open(edit, { user: own.users.serviceProvider, at });
      const place = page.getByRole('region', { name: 'Place in the network' });
      await expect.poll(() => place.innerText()).toMatch(/SML\s+Held by another SMP.*ERR-106/s);
      await page.screenshot({ path: join(shots, 'participant-held-elsewhere-desktop.png'), fullPage: true });
      expect(await axeViolations(page, 'participant held by another SMP, with the migration key form')).toEqual([]);
      await place.getByLabel('Migration key').fill('aB3$cD4%eF5^gH6!');
      await place.getByRole('button', { name: 'Take over' }).click();
      await expect.poll(() => place.innerText()).toContain('The key is on its way to the SML.');
      await vi.waitFor(async () => expect(await smlState()).toBe('registered'), { timeout: 15_000, interval: 100 });
      await page.evaluate(() => {
        location.hash = '#/participants';
      });
      await page.evaluate((target) => {
        location.hash = target;
      }, edit);
      await expect.poll(() => place.innerText()).toMatch(/SML\s+Registered/);
      expect(sml.registrations.get('CONSOLE-SMP')?.has(taken)).toBe(true);

      await place.getByRole('button', { name: 'Give a migration key' }).click();
      const key = await place.locator('code.migration-key').innerText();
      expect(key).toMatch(MIGRATION_KEY_PATTERN);
      await expect.poll(() => place.innerText()).toMatch(/SML\s+Migrating to another SMP/);
      await page.screenshot({ path: join(shots, 'participant-migrating-out-desktop.png'), fullPage: true });
      await place.getByRole('button', { name: 'Withdraw the key' }).click();
      await expect.poll(() => place.innerText()).toMatch(/SML\s+Registered.*withdrawn/s);
      expect(await place.locator('code.migration-key').count()).toBe(0);
      await context.close();
    } finally {
      await own.close();
      await sml.close();
    }
  }, 90_000);

  it("role boundaries: a provider sees no authority page and no other provider's participant; the authority sees no users page", async () => {
    const theirs = await addParticipant(test.app, test.users.otherServiceProvider, { name: 'Not Yours AS' });
    const { context, page } = await open('#/participants', { user: test.users.serviceProvider });
    const nav = await page.getByRole('navigation', { name: 'Main' }).innerText();
    expect(nav).not.toMatch(/Users|Access points|Service providers/);
    await page.getByLabel('Search').fill(theirs.organizationIdentifier);
    await expect.poll(() => page.locator('.empty').innerText()).toBe('Nothing found.');
    for (const hash of ['#/users', '#/access-points', '#/service-providers']) {
      await page.evaluate((target) => {
        location.hash = target;
      }, hash);
      await expect.poll(() => page.locator('main').innerText()).toContain('This page is not for your role.');
    }
    await context.close();

    const authority = await open('#/users', { user: test.users.authority });
    await expect.poll(() => authority.page.locator('main').innerText()).toContain('This page is not for your role.');
    expect(await authority.page.getByRole('navigation', { name: 'Main' }).innerText()).toContain('Access points');
    await authority.page.getByRole('button', { name: 'Sign out' }).click();
    await authority.page.evaluate(() => {
      location.hash = '#/access-points';
    });
    await expect.poll(() => authority.page.locator('main').innerText()).toContain('Sign in to see this page.');
    await authority.context.close();

    // A wrong password is the API's message on the sign-in form, and nothing is kept anywhere.
    const anonymous = await open('#/sign-in');
    await anonymous.page.getByLabel('Username').fill('provider-one');
    await anonymous.page.getByLabel('Password').fill('wrong-password');
    await anonymous.page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => anonymous.page.getByRole('alert').innerText()).toBe('Wrong username or password.');
    expect(
      await anonymous.page.evaluate(() => localStorage.length + sessionStorage.length + document.cookie.length),
    ).toBe(0);
    await anonymous.context.close();
  }, 90_000);

  it('the ADMIN lifts a sign-in lock on the users page; a user changes its own password; a refused character shows at its field', async () => {
    const password = 'first-browser-password';
    const created = await test.app.inject({
      method: 'POST',
      url: '/rest/api/users',
      headers: { authorization: test.users.admin.authorization },
      payload: {
        username: 'locked-browser-user',
        password,
        role: 'SERVICE_PROVIDER',
        serviceProvider: { identifier: test.fixture.serviceProviderId },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const user: TestUser = {
      username: 'locked-browser-user',
      password,
      authorization: `Basic ${Buffer.from(`locked-browser-user:${password}`).toString('base64')}`,
    };
    const signsIn = async (secret: string) =>
      (
        await fetch(`${base}/rest/api/participants?size=1`, {
          headers: { authorization: `Basic ${Buffer.from(`${user.username}:${secret}`).toString('base64')}` },
        })
      ).status;
    // As too many wrong passwords from this machine would have locked it.
    await storeLock(
      test.db,
      { username: user.username, address: '127.0.0.1', until: Date.now() + 600_000 },
      MAX_LOCKS_PER_ADDRESS,
    );
    await expect.poll(() => signsIn(password), { timeout: 10_000 }).toBe(429);
    // As an address that guessed more usernames than one may: locked as a whole.
    await storeLock(test.db, { username: 'a-guessed-name', address: '192.0.2.47', until: Date.now() + 600_000 }, 0);

    const admin = await open('#/users', { user: test.users.admin });
    const locks = admin.page.getByRole('region', { name: 'Sign-in locks' });
    await locks.getByRole('button', { name: `Lift the lock of ${user.username} from 127.0.0.1` }).click();
    await expect
      .poll(() => locks.getByRole('status').innerText())
      .toBe(`${user.username} can sign in again from that address.`);
    await expect.poll(() => locks.locator('tbody tr', { hasText: user.username }).count()).toBe(0);
    expect(await locks.locator('tbody tr', { hasText: '192.0.2.47' }).innerText()).toContain('every username');
    await locks.getByRole('button', { name: 'Lift the lock of every username from 192.0.2.47' }).click();
    await expect
      .poll(() => locks.getByRole('status').innerText())
      .toBe('Every username can sign in again from that address.');
    await expect.poll(() => locks.locator('tbody tr', { hasText: '192.0.2.47' }).count()).toBe(0);
    expect(await signsIn(password)).toBe(200);
    await admin.context.close();

    const own = await open('#/participants', { user });
    await own.page.getByRole('link', { name: 'Change password' }).click();
    const form = own.page.locator('#password-form');
    await form.getByLabel('Current password').fill('not-my-password');
    await form.locator('input[name="newPassword"]').fill('second-browser-password');
    await form.locator('input[name="repeatPassword"]').fill('second-browser-password');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect
      .poll(() =>
        form
          .locator('.field', { has: own.page.getByLabel('Current password') })
          .locator('.field-error')
          .innerText(),
      )
      .toBe('is not your current password');
    await form.getByLabel('Current password').fill(password);
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect
      .poll(() => form.getByRole('status').innerText())
      .toBe('Your password is changed. Use the new one from now on.');
    expect(await signsIn(password)).toBe(401);
    expect(await signsIn('second-browser-password')).toBe(200);
    // The tab goes on with the new password: a page that reads the API still loads.
    await own.page.evaluate(() => {
      location.hash = '#/participants';
    });
    await own.page.locator('tbody tr:not(.placeholder)').first().waitFor();

    // An organization number typed in groups: the console leaves out the blanks, and the API's rule shows at its field.
    await own.page.getByRole('link', { name: 'Add a participant' }).click();
    // The field (a combobox: it offers the code list's ICDs), not the list's "Sort by ICD" button, which may still show while the form replaces the list.
    await own.page.getByRole('combobox', { name: 'ICD' }).fill('0192');
    await own.page.getByLabel('Organization number').fill('666 777');
    await own.page.getByLabel('Contact name').fill('Kari Nordmann');
    await own.page.getByRole('button', { name: 'Save' }).click();
    const numberError = own.page
      .locator('.field', { has: own.page.getByLabel('Organization number') })
      .locator('.field-error');
    await expect
      .poll(() => numberError.innerText())
      .toBe('not a Norwegian organization number: nine digits, the last a mod 11 check digit');
    await own.context.close();
  }, 90_000);

  // One test per page, so that a slow machine's time is bounded page by page and a failure names its page.
  for (const { name, hash, as, ready } of PAGES) {
    it(`${name}: no axe-core WCAG 2.1 A/AA violation, no layout jump after load, screenshots at phone and desktop width`, async () => {
      const violations: string[] = [];
      // One tab, loaded afresh at each width.
      const { context, page } = await open(hash, { user: userOf(as), width: WIDTHS.phone });
      for (const [label, width] of Object.entries(WIDTHS)) {
        if (width !== WIDTHS.phone) {
          await page.setViewportSize({ width, height: 900 });
          await page.reload();
        }
        await page
          .locator(ready)
          .first()
          .waitFor({ timeout: 10_000 })
          .catch(async (error: Error) => {
            throw new Error(`${name} at ${width}px: ${error.message}\n${await page.locator('body').innerText()}`);
          });
        await settled(page);
        violations.push(...(await axeViolations(page, `${name} at ${width}px`)));
        await page.screenshot({ path: join(shots, `${name}-${label}.png`), fullPage: true });
      }
      await context.close();
      expect(violations).toEqual([]);
    }, 90_000);
  }

  // One full run in six on 2026-11-27 hung here for the whole 30 s after the file's other tests (never alone, in
  // three tries at once): not yet explained, so a second attempt is allowed (this stop's closing note says so).
  it("keeps the table's place while a page loads (no layout jump)", { retry: 1 }, async () => {
    const { context, page } = await open('#/participants', { user: test.users.serviceProvider });
    await page.locator('tbody tr:not(.placeholder)').first().waitFor();
    const before = await page.locator('.pager').boundingBox();
    // The answer is held back: the previous rows hold the room until the next page arrives.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(
      (url) => url.pathname === '/rest/api/participants',
      async (route) => {
        await held;
        await route.continue();
      },
    );
    await page.getByRole('button', { name: /Sort by Name/ }).click();
    await expect.poll(() => page.locator('.table-wrap').getAttribute('aria-busy')).toBe('true');
    expect((await page.locator('.pager').boundingBox())?.y).toBe(before?.y);
    release();
    await expect.poll(() => page.locator('.table-wrap').getAttribute('aria-busy')).toBe('false');
    await context.close();
  });

  it('on a phone, where no header row shows, the order is chosen from a list and applied by the API', async () => {
    const { context, page } = await open('#/participants', { user: test.users.serviceProvider, width: WIDTHS.phone });
    await page.locator('tbody tr:not(.placeholder)').first().waitFor();
    expect(await page.locator('thead').evaluate((head) => head.getBoundingClientRect().height)).toBeLessThanOrEqual(1);
    const sorted = page.waitForRequest((request) => request.url().includes('sort=organizationIdentifier%2CDESC'));
    await page.getByLabel('Order').selectOption({ label: 'Organization number ▼' });
    await sorted;
    const listed = await test.app.inject({
      url: '/rest/api/participants?sort=organizationIdentifier,DESC&size=1',
      headers: { authorization: test.users.serviceProvider.authorization },
    });
    await expect
      .poll(() => page.locator('tbody tr').first().innerText())
      .toContain(listed.json().content[0].organizationIdentifier);
    await context.close();
  });

  it("no page of all these wrote an error to the browser's console", () => {
    console.log(`web console screenshots: ${shots}`);
    expect(problems).toEqual([]);
  });
});
