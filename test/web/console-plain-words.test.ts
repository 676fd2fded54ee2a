import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCodeLists } from '../../src/code-lists/codelists.js';
import { loadCatalogue } from '../../src/code-lists/repository.js';
import { BILLING_PROCESS } from '../../src/setup/demo.js';
import { checkedKey, SmpKeys } from '../../src/smp/keys.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { axeViolations, launchChromium } from '../helpers/browser.js';
import { testCertificate } from '../helpers/certificates.js';
import { CODE_LISTS } from '../helpers/code-lists.js';
import { CONSOLE_ROOT, consoleOpener, WIDTHS } from '../helpers/console.js';
import { testDatabaseKind } from '../helpers/database.js';
import { testOutputDir } from '../helpers/openapi-tools.js';
import { addParticipant, uniqueOrganization } from '../helpers/participants.js';

/** Where the screenshots of the pages this file changed go besides the test output: for the closing note, not committed. */
const CLOSING_SHOTS = '/tmp/shots-h3';

/**
 * The console in plain words and its small things (issue 48, items 3, 4 and 8), in Chromium against the real
 * service with the official code lists: characters named, a locked sign-in, a registry and an SML out of reach,
 * the import's fields, the status's untrusted certificate, the deliveries without an SML, plurals, roles, dates,
 * the password form, the export, the lookup's address, the ICD's name, the version.
 */
describe('the console in plain words, in Chromium', () => {
  let test: TestApp;
  let bare: TestApp;
  let browser: Browser;
  let base: string;
  let bareBase: string;
  const problems: string[] = [];
  const shots = testOutputDir(`web-console-plain-words-${testDatabaseKind}`);
  const open = consoleOpener(
    () => browser,
    () => base,
    problems,
  );
  // One screenshot, written to both places.
  const shoot = async (page: Page, name: string) => {
    const png = await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
    writeFileSync(join(CLOSING_SHOTS, `${name}-${testDatabaseKind}.png`), png);
  };
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };

  beforeAll(async () => {
    mkdirSync(CLOSING_SHOTS, { recursive: true });
    const smp = await testCertificate('SMP self-signed');
    test = await startTestApp({
      console: { root: CONSOLE_ROOT },
      smp: { keys: new SmpKeys(checkedKey(smp.key, smp.cert, false)) },
      // An SML nobody answers at, on an address no provider should read.
      sml: { url: 'http://127.0.0.1:9/', smpId: 'PLAIN-WORDS-SMP', timeoutMs: 500 },
      delivery: { retryMs: { first: 600_000, max: 600_000 } },
      signInThrottle: { freeFailures: 5, maxFailures: 2 },
    });
    await loadCatalogue(test.db, (await readCodeLists([CODE_LISTS])).catalogue);
    // No SML and no Directory: nothing is delivered.
    bare = await startTestApp({ console: { root: CONSOLE_ROOT } });
    base = await test.app.listen({ host: '127.0.0.1', port: 0 });
    bareBase = await bare.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await test?.close();
    await bare?.close();
  });

  it('a locked sign-in says for how long and who lifts it, in English and in Norwegian; a registry out of reach says so', async () => {
    // Chromium logs the refused connections this test makes: they are not the page's problems.
    const { context, page } = await consoleOpener(
      () => browser,
      () => base,
      [],
    )('#/sign-in');
    const problem = page.locator('.problem');
    const attempt = async (
      username: string,
      labels = { username: 'Username', password: 'Password', button: 'Sign in' },
    ) => {
      await page.getByLabel(labels.username).fill(username);
      await page.getByLabel(labels.password).fill('not-the-password');
      await page.getByRole('button', { name: labels.button }).click();
      await problem.waitFor();
      const text = await problem.innerText();
      await page.getByLabel(labels.password).fill('');
      return text;
    };
    expect(await attempt('plain-words-guess')).toBe('Wrong username or password.');
    let text = '';
    for (let tries = 0; tries < 3 && !text.includes('locked'); tries += 1) text = await attempt('plain-words-guess');
    expect(text).toMatch(
      /^This sign-in is locked after too many wrong passwords\. Try again in \d+ minutes?, or ask an administrator to lift the lock \(Users, Sign-in locks\)\.$/,
    );
    await shoot(page, 'sign-in-locked');
    expect(await axeViolations(page, 'sign-in locked')).toEqual([]);

    await page.getByLabel('Language').selectOption('nb');
    text = await attempt('plain-words-guess', { username: 'Brukernavn', password: 'Passord', button: 'Logg inn' });
    expect(text).toMatch(
      /^Denne innloggingen er sperret etter for mange feil passord\. Prøv igjen om \d+ minutt(er)?, eller be en administrator oppheve sperren/,
    );

    // The service away: no "TypeError: Failed to fetch".
    await page.getByLabel('Språk').selectOption('en');
    await page.route('**/rest/api/**', (route) => route.abort('connectionrefused'));
    text = await attempt('demo-provider');
    expect(text).toBe('The registry cannot be reached: check your connection and try again in a moment.');
    await context.close();
  }, 60_000);

  it('the import shows an example line, and each refused line names its fields in words, marked: a space, a missing contact', async () => {
    const good = uniqueOrganization();
    const line = (fields: Record<string, unknown>) =>
      JSON.stringify({
        icd: '0192',
        name: 'Plain Words AS',
        processes: [{ qualifiedIdentifier: BILLING_PROCESS }],
        ...fields,
      });
    const contact = { name: 'Kari Nordmann', email: 'kari@plain.example' };
    const file = [
      line({ organizationIdentifier: good, contact }),
      line({ organizationIdentifier: '921 000 049', contact }),
      line({ organizationIdentifier: uniqueOrganization() }),
    ].join('\n');
    const { context, page } = await open('#/import', { user: test.users.serviceProvider });
    const example = await page.locator('pre.example').innerText();
    expect(JSON.parse(example)).toMatchObject({
      icd: '0192',
      organizationIdentifier: '921000049',
      contact: { name: 'Kari Nordmann' },
    });
    await page
      .getByLabel('File')
      .setInputFiles({ name: 'participants.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(file) });
    await page.getByRole('button', { name: 'Start import' }).click();
    await expect
      .poll(() => page.locator('.progress-row').innerText(), { timeout: 10_000 })
      .toContain('1 imported, 0 already present, 2 refused, of 3 lines.');
    const rows = await page.locator('tbody tr').allInnerTexts();
    expect(rows[1]).toMatch(
      /^2\s+✗ Refused: Nothing was saved from this line:\s+Organization number: Spaces are not allowed here\.$/,
    );
    expect(rows[2]).toMatch(/^3\s+✗ Refused: Nothing was saved from this line:\s+Contact: Fill this in\.$/);
    expect(rows.join('\n')).not.toMatch(/U\+0020|US-ASCII|marked fields/);
    expect(await page.locator('tbody tr').nth(2).locator('mark').allInnerTexts()).toEqual(['Contact']);
    await shoot(page, 'import-refused-fields');
    expect(await axeViolations(page, 'import with refused fields')).toEqual([]);

    // Norwegian too.
    await page.getByLabel('Language').selectOption('nb');
    await page.getByRole('button', { name: 'Start import' }).click();
    await expect
      .poll(() => page.locator('tbody tr').nth(1).innerText(), { timeout: 10_000 })
      .toMatch(/Organisasjonsnummer: Mellomrom er ikke tillatt her\./);
    expect(await page.locator('tbody tr').nth(2).innerText()).toMatch(/Kontakt: Fyll ut dette\./);
    await context.close();
  }, 60_000);

  it('the participant form names the ICD from the code list, and a refused character in words', async () => {
    const { context, page } = await open('#/participants/new', { user: test.users.serviceProvider });
    const icd = page.locator('input[name="icd"]');
    await expect
      .poll(async () => await page.locator('.field', { has: icd }).innerText())
      .toContain('ICD 0192: Organisasjonsnummer (NO, The Brønnøysund Register Centre)');
    await icd.fill('0007');
    await expect.poll(async () => await page.locator('.field', { has: icd }).innerText()).toMatch(/ICD 0007: .+/);
    await icd.fill('9999');
    await expect
      .poll(async () => await page.locator('.field', { has: icd }).innerText())
      .toContain('ICD 9999 is not in the loaded identifier schemes.');
    await icd.fill('0192');
    await page.getByLabel('Organization number').fill('92100004ø');
    await page.getByLabel('Contact name').fill('Kari Nordmann');
    await page.getByRole('button', { name: 'Save' }).click();
    const number = page.locator('.field', { has: page.getByLabel('Organization number') });
    await expect
      .poll(() => number.innerText())
      .toContain(
        'The character “ø” is not allowed here: only the letters A to Z, digits and punctuation, with no spaces.',
      );
    await shoot(page, 'participant-form-icd-and-character');
    expect(await axeViolations(page, 'participant form with the ICD named and a refused character')).toEqual([]);
    await context.close();
  }, 60_000);

  it("the SML out of reach is said in words on the deliveries page and the participant's page, with no address anywhere a provider reads", async () => {
    const participant = await addParticipant(test.app, test.users.serviceProvider, {
      name: 'Nettverk Ord AS',
      processes: [{ qualifiedIdentifier: BILLING_PROCESS }],
    });
    const failed = async () =>
      (
        await test.app.inject({
          url: '/rest/api/deliveries',
          headers: { authorization: test.users.admin.authorization },
        })
      )
        .json()
        .find((delivery: { target: string }) => delivery.target === 'sml')?.attempts ?? 0;
    await expect.poll(failed, { timeout: 15_000 }).toBeGreaterThan(0);
    const network = await test.app.inject({
      url: `/rest/api/participants/${participant.identifier}/network`,
      headers: { authorization: test.users.serviceProvider.authorization },
    });
    expect(network.json().sml.lastError.message).toBe('SML could not be reached (the connection was refused)');
    expect(network.body).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);

    const provider = await open(`#/participants/edit/${participant.identifier}`, { user: test.users.serviceProvider });
    const place = provider.page.getByRole('region', { name: 'Place in the network' });
    await expect
      .poll(() => place.innerText(), { timeout: 15_000 })
      .toMatch(/SML\s+Pending · Since .*The SML could not be reached; the delivery is tried again by itself\./s);
    await shoot(provider.page, 'participant-network-unreachable');
    await provider.context.close();

    const { context, page } = await open('#/deliveries', { user: test.users.admin });
    const sml = page.locator('table').first().locator('tbody tr', { hasText: 'SML' });
    await expect
      .poll(() => sml.innerText(), { timeout: 15_000 })
      .toContain('The SML could not be reached; the delivery is tried again by itself.');
    expect(await page.locator('main').innerText()).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|DIRECTORY/);
    await page.getByLabel('Language').selectOption('nb');
    await expect.poll(() => sml.innerText()).toContain('SML kunne ikke nås; leveransen prøves igjen av seg selv.');
    await context.close();
  }, 60_000);

  it('the status flags a self-signed SMP certificate; without an SML the deliveries page says nothing is delivered', async () => {
    const { context, page } = await open('#/status', { user: test.users.admin });
    const attention = page.locator('ul.attention');
    await expect
      .poll(() => attention.innerText(), { timeout: 10_000 })
      .toContain('The SMP signs with a self-signed certificate (CN=SMP self-signed): no network client trusts it.');
    expect(await page.locator('main').innerText()).not.toContain('Nothing needs attention');
    await shoot(page, 'status-self-signed');
    expect(await axeViolations(page, 'status with a self-signed SMP certificate')).toEqual([]);
    await context.close();

    const unconfigured = await consoleOpener(
      () => browser,
      () => bareBase,
      problems,
    )('#/deliveries', { user: bare.users.admin });
    const main = unconfigured.page.locator('main');
    await expect
      .poll(() => main.innerText())
      .toContain('No SML or Directory is configured, so no participant is delivered and none is held up.');
    expect(await main.innerText()).not.toContain('every participant is where it should be');
    await shoot(unconfigured.page, 'deliveries-unconfigured');
    expect(await axeViolations(unconfigured.page, 'deliveries without an SML')).toEqual([]);
    await unconfigured.context.close();
  }, 60_000);

  it('roles in words, one date format, one plural, the version at the foot; the sign-in hint reads', async () => {
    const { context, page } = await open('#/participants', { user: test.users.serviceProvider });
    await page.locator('tbody tr:not(.placeholder)').first().waitFor();
    expect(await page.locator('header .who').innerText()).toMatch(/Service provider$/);
    const modified = await page.locator('td[data-label="Modified"]').allInnerTexts();
    expect(modified.length).toBeGreaterThan(0);
    for (const date of modified) expect(date).toMatch(/^\d{1,2} [A-Z][a-z]{2,3} \d{4}$/);
    expect(await page.locator('footer').innerText()).toBe(`Registry ${version}`);
    // Export in one click.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download participants.jsonl' }).click(),
    ]);
    expect(
      readFileSync(await download.path(), 'utf8')
        .trim()
        .split('\n').length,
    ).toBeGreaterThan(0);
    await expect
      .poll(() => page.locator('main').innerText())
      .toMatch(/\d+ participants? saved as participants\.jsonl in your downloads\./);
    await context.close();

    const admin = await open('#/users', { user: test.users.admin });
    await admin.page.locator('tbody tr:not(.placeholder)').first().waitFor();
    const roles = new Set(await admin.page.locator('td[data-label="Role"]').allInnerTexts());
    expect(
      [...roles].every((role) =>
        ['Administrator', 'Registry authority', 'Service provider', 'Access point provider'].includes(role),
      ),
    ).toBe(true);
    expect(await admin.page.locator('main').innerText()).not.toMatch(/SERVICE_PROVIDER|REGISTRY_AUTHORITY/);
    await admin.context.close();

    const signIn = await open('#/sign-in');
    expect(await signIn.page.locator('main').innerText()).toContain(
      'This tab alone keeps you signed in, across reloads',
    );
    expect(await signIn.page.locator('main').innerText()).not.toContain('signed in in');
    await signIn.context.close();
  }, 60_000);

  it("the password change asks for the new password twice and says its rules as text, not in the browser's bubble", async () => {
    const { context, page } = await open('#/password', { user: test.users.serviceProvider });
    const form = page.locator('#password-form');
    expect(await form.innerText()).toContain(
      'At least 12 characters, not your username, not one character repeated, not a common password.',
    );
    await page.getByLabel('Current password').fill(test.users.serviceProvider.password);
    await page.locator('input[name="newPassword"]').fill('short');
    await page.locator('input[name="repeatPassword"]').fill('different');
    await page.getByRole('button', { name: 'Change password' }).last().click();
    await expect.poll(() => form.innerText()).toContain('Too short: at least 12 characters (5 are typed).');
    expect(await form.innerText()).toContain('The two new passwords differ: type the same one twice.');
    expect(await page.locator('input[name="repeatPassword"]').getAttribute('aria-invalid')).toBe('true');
    await shoot(page, 'password-repeat');
    expect(await axeViolations(page, 'password change with mistakes')).toEqual([]);
    await context.close();
  }, 60_000);

  it('a lookup has its own address: bookmarked, reloaded, and Back returns to the one before', async () => {
    const [first, second] = await Promise.all(
      ['Oppslag En AS', 'Oppslag To AS'].map((name) => addParticipant(test.app, test.users.serviceProvider, { name })),
    );
    const { context, page } = await open('#/lookup', { width: WIDTHS.phone });
    const find = async (number: string) => {
      await page.getByLabel('Organization number').fill(number);
      await page.getByRole('button', { name: 'Find' }).click();
    };
    const heading = page.locator('article h2');
    await find(first!.organizationIdentifier);
    await expect.poll(() => heading.innerText()).toBe('Oppslag En AS');
    expect(new URL(page.url()).hash).toBe(`#/lookup/0192/${first!.organizationIdentifier}`);
    await find(second!.organizationIdentifier);
    await expect.poll(() => heading.innerText()).toBe('Oppslag To AS');
    await page.goBack();
    await expect.poll(() => heading.innerText()).toBe('Oppslag En AS');
    expect(await page.getByLabel('Organization number').inputValue()).toBe(first!.organizationIdentifier);
    await page.reload();
    await expect.poll(() => heading.innerText()).toBe('Oppslag En AS');
    await shoot(page, 'lookup-address-phone');
    expect(await axeViolations(page, 'lookup from its address')).toEqual([]);
    await context.close();
    expect(problems).toEqual([]);
  }, 60_000);
});
