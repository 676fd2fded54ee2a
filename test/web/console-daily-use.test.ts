import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCodeLists } from '../../src/code-lists/codelists.js';
import { loadCatalogue } from '../../src/code-lists/repository.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { axeViolations, launchChromium } from '../helpers/browser.js';
import { CODE_LISTS } from '../helpers/code-lists.js';
import { CONSOLE_ROOT, consoleOpener, WIDTHS } from '../helpers/console.js';
import { testDatabaseKind } from '../helpers/database.js';
import { testOutputDir } from '../helpers/openapi-tools.js';
import { addParticipant, uniqueOrganization } from '../helpers/participants.js';

/** The official catalogue's "Peppol poacc billing 01 1.0" (Peppol BIS Billing 3.0). */
const BILLING = 'cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const BILLING_TITLE = 'Peppol poacc billing 01 1.0';

interface Process {
  identifier: string;
  qualifiedIdentifier: string;
  title: string;
  domain: string;
  restricted: boolean;
  visible: boolean;
  documentTypes: Array<{ identifier: string; qualifiedIdentifier: string }>;
}

/**
 * The console as its users meet it day to day, with the official code lists loaded (release 9.7): the process
 * picker over the real catalogue, errors in plain words, the authority's search across providers, the public
 * lookup's heading, and the header on a phone and a wide screen with a sign-in that survives a reload.
 */
describe('the console with the real catalogue, in Chromium', () => {
  let test: TestApp;
  let browser: Browser;
  let base: string;
  let catalogue: Process[];
  const problems: string[] = [];
  const shots = testOutputDir(`web-console-daily-use-${testDatabaseKind}`);
  const open = consoleOpener(
    () => browser,
    () => base,
    problems,
  );
  const admin = (url: string, method = 'GET', payload?: object) =>
    test.app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: test.users.admin.authorization },
      ...(payload ? { payload } : {}),
    });

  beforeAll(async () => {
    test = await startTestApp({ console: { root: CONSOLE_ROOT } });
    await loadCatalogue(test.db, (await readCodeLists([CODE_LISTS])).catalogue);
    catalogue = (await admin('/rest/api/processes?size=2000&sort=title')).json().content;
    // The official lists have no required ICD or dependency: one process with both shows every reason.
    const billing = catalogue.find((process) => process.qualifiedIdentifier === BILLING) as Process;
    const added = await admin('/rest/api/processes', 'POST', {
      domain: 'national',
      title: 'Norwegian reminder',
      qualifiedIdentifier: 'cenbii-procid-ubl::urn:test:reminder',
      restricted: false,
      visible: true,
      capabilities: [],
      documentTypes: [],
      dependencies: [{ identifier: billing.identifier }],
      requiredICDs: ['0192'],
    });
    expect(added.statusCode, added.body).toBe(201);
    base = await test.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await test?.close();
  });

  const focused = (page: Page) =>
    page.evaluate(() => `${document.activeElement?.tagName} ${document.activeElement?.textContent ?? ''}`.trim());

  it('the participant form over the official catalogue: filters, chosen apart from what can be added, reasons, the keyboard alone', async () => {
    const visible = catalogue.filter((process) => process.visible);
    const restricted = visible.filter((process) => process.restricted);
    expect(visible.length).toBeGreaterThan(100);
    expect(restricted.length).toBeGreaterThan(0);
    const { context, page } = await open('#/participants/new', { user: test.users.serviceProvider });
    const candidates = page.locator('ul.candidates > li');
    await expect.poll(() => candidates.count()).toBe(visible.length + 1);
    // No wall of checkboxes: a bounded box, each process with Add or the reason it cannot be added.
    expect(await page.getByRole('checkbox').count()).toBe(0);
    expect(await page.locator('ul.candidates').evaluate((list) => list.getBoundingClientRect().height)).toBeLessThan(
      520,
    );
    expect(await page.locator('main').innerText()).toContain(`${visible.length + 1} of ${visible.length + 1} shown`);
    const restrictedRow = candidates.filter({ hasText: restricted[0]!.qualifiedIdentifier });
    // Whom to ask, said once: not "Cannot be added now: Restricted: cannot be added."
    expect(await restrictedRow.innerText()).toContain(
      'Cannot be added now: Closed to new participants by the registry authority; ask the authority to open it if you need it.',
    );
    expect(await restrictedRow.getByRole('button').count()).toBe(0);
    const reminder = candidates.filter({ hasText: 'Norwegian reminder' });
    expect(await reminder.innerText()).toContain(`Also needs: ${BILLING_TITLE}.`);
    await page.getByLabel('ICD').fill('0007');
    await expect
      .poll(() => reminder.innerText())
      .toContain(`Needs one of the ICDs 0192. Also needs: ${BILLING_TITLE}.`);
    await page.getByLabel('ICD').fill('0192');
    await page.screenshot({ path: join(shots, 'participant-form-catalogue-desktop.png'), fullPage: true });
    expect(await axeViolations(page, 'participant form with the official catalogue')).toEqual([]);

    // By name, by domain, by identifier.
    const filter = page.getByLabel('Filter by name, domain, identifier or document type');
    await filter.fill('POACC billing');
    await expect.poll(() => candidates.allInnerTexts()).toEqual([expect.stringContaining(BILLING_TITLE)]);
    await filter.fill('');
    const domains = [...new Set(visible.map((process) => process.domain))];
    await page.getByLabel('Domain', { exact: true }).selectOption(domains[0]!);
    await expect.poll(() => candidates.count()).toBe(visible.filter((process) => process.domain === domains[0]).length);
    await page.getByLabel('Domain', { exact: true }).selectOption('');
    const valueOf = (process: Process) => process.qualifiedIdentifier.split('::')[1]!;
    const byIdentifier = visible.find(
      (process) => visible.filter((other) => other.qualifiedIdentifier.includes(valueOf(process))).length === 1,
    ) as Process;
    await filter.fill(valueOf(byIdentifier));
    await expect.poll(() => candidates.allInnerTexts()).toEqual([expect.stringContaining(byIdentifier.title)]);

    // The keyboard alone: type the filter, Tab to Add, Enter; focus stays in the list, the process moves to the chosen.
    await filter.fill('');
    await filter.focus();
    await page.keyboard.type('poacc billing');
    await expect.poll(() => candidates.count()).toBe(1);
    await filter.focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    const firstAdd = await focused(page);
    expect(firstAdd).toMatch(/^BUTTON Add/);
    await page.keyboard.press('Enter');
    const chosen = page.locator('ul.chosen > li');
    await expect.poll(() => chosen.count()).toBe(1);
    expect(await chosen.first().innerText()).toContain(BILLING_TITLE);
    await expect.poll(() => focused(page)).toMatch(/^(BUTTON Add|INPUT)/);
    expect(await page.getByRole('status').filter({ hasText: 'Added:' }).count()).toBe(1);
    // Removed with the keyboard too: Space on Remove, and the process can be added again.
    await chosen
      .first()
      .getByRole('button', { name: /^Remove/ })
      .focus();
    await page.keyboard.press('Space');
    await expect.poll(() => chosen.count()).toBe(0);
    expect(await page.getByText('No process is chosen yet.').count()).toBe(1);

    await page.setViewportSize({ width: WIDTHS.phone, height: 900 });
    await page.getByLabel('Filter by name, domain, identifier or document type').fill('');
    await page.screenshot({ path: join(shots, 'participant-form-catalogue-phone.png'), fullPage: true });
    expect(await axeViolations(page, 'participant form with the official catalogue, phone')).toEqual([]);
    await context.close();
  }, 90_000);

  it('the picker finds a process by its document types\' names, says domains in words, and titles the lists\' "none"', async () => {
    const { context, page } = await open('#/participants/new', { user: test.users.serviceProvider });
    const candidates = page.locator('ul.candidates > li');
    const filter = page.getByLabel('Filter by name, domain, identifier or document type');
    // Peppol BIS Billing's title says "billing"; its document types say "Invoice".
    await filter.fill('invoice');
    await expect.poll(() => candidates.allInnerTexts()).toContainEqual(expect.stringContaining(BILLING_TITLE));
    expect(await candidates.allInnerTexts()).toContainEqual(
      expect.stringContaining('Peppol poacc BIS invoice response 3'),
    );
    await filter.fill('');
    // Domains in words, in the filter and beside each process: no bare POAC, PRAC or OO.
    const domains = await page.getByLabel('Domain', { exact: true }).locator('option').allInnerTexts();
    expect(domains).toEqual(
      expect.arrayContaining([
        'Post-award procurement',
        'Pre-award procurement',
        'Peppol operations (reporting)',
        'Logistics',
      ]),
    );
    expect(domains.filter((domain) => ['POAC', 'PRAC', 'OO'].includes(domain))).toEqual([]);
    await page.getByLabel('Domain', { exact: true }).selectOption('PRAC');
    await expect
      .poll(async () =>
        (await candidates.locator('.domain').allInnerTexts()).every((domain) => domain === 'Pre-award procurement'),
      )
      .toBe(true);
    expect(await candidates.allInnerTexts()).toContainEqual(
      expect.stringMatching(/^No process \(none\)\s+Pre-award procurement\s+cenbii-procid-ubl::none/),
    );
    await page.getByLabel('Language').selectOption('nb');
    await expect
      .poll(() => page.getByLabel('Domene', { exact: true }).locator('option:checked').innerText())
      .toBe('Innkjøp før kontraktstildeling');
    await page.screenshot({ path: join(shots, 'picker-domains-nb-desktop.png'), fullPage: true });
    expect(await axeViolations(page, 'participant form in Norwegian, filtered by domain')).toEqual([]);
    await context.close();
  }, 90_000);

  it('errors in plain words at every field they concern, cleared as things change; refusals by title', async () => {
    const { context, page } = await open('#/catalogue-admin', { user: test.users.admin });
    await page.getByLabel('Search').fill('Norwegian reminder');
    await page.getByRole('button', { name: 'Edit Norwegian reminder' }).click();
    const edit = page.locator('#process-edit-form');
    // The second and third required ICDs are wrong: both messages show at the field, each naming its value.
    await edit.getByLabel('Required ICDs').fill('0192, 9999, 1234');
    await edit.getByRole('button', { name: 'Save' }).click();
    const icdError = edit.locator('.field', { has: page.getByLabel('Required ICDs') }).locator('.field-error');
    await expect
      .poll(() => icdError.innerText())
      .toBe(
        '“9999”: Not a known ICD (four digits, such as 0192). “1234”: Not a known ICD (four digits, such as 0192).',
      );
    expect(await edit.innerText()).not.toMatch(/DTO|objectName|Validation failed|requiredICDs\[/);
    expect(await edit.getByRole('alert').innerText()).toBe('Nothing was saved: check the marked fields.');
    await page.screenshot({ path: join(shots, 'process-errors-desktop.png') });
    expect(await axeViolations(page, 'process form with errors at a list field')).toEqual([]);
    await edit.getByLabel('Required ICDs').fill('0192');
    expect(await icdError.count()).toBe(0);
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved.' }).count()).toBe(1);
    // "Saved." is about the last save: it goes when the user turns to something else.
    await page.getByLabel('Search').first().fill('Norwegian');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Saved.' }).count()).toBe(0);

    // A refusal names the provider by its title, not its UUID.
    await addParticipant(test.app, test.users.serviceProvider, { name: 'Bruker AS' });
    await page.evaluate(() => {
      location.hash = '#/service-providers';
    });
    await page.getByRole('button', { name: 'Delete Provider One' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expect
      .poll(() => page.getByRole('dialog').getByRole('alert').innerText())
      .toMatch(/^The service provider 'Provider One' is still used by \d+ participant\(s\) and 1 user\(s\)$/);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    // While a list loads it says so; it never claims "0 in all" before the answer.
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
    await page.evaluate(() => {
      location.hash = '#/participants';
    });
    await expect.poll(() => page.locator('.pager').innerText()).toContain('Loading…');
    expect(await page.locator('.pager').innerText()).not.toContain('0 in all');
    release();
    await expect.poll(() => page.locator('.pager').innerText()).toMatch(/[1-9]\d* in all/);
    await context.close();
  }, 90_000);

  it("the authority searches every provider's participants and sees each provider's identifier for --service-provider", async () => {
    const theirs = await addParticipant(test.app, test.users.otherServiceProvider, {
      name: 'Annen Leverandør Kunde AS',
    });
    const { context, page } = await open('#/participants', { user: test.users.authority });
    await page.getByLabel('Search').fill(theirs.organizationIdentifier);
    const row = page.locator('tbody tr', { hasText: theirs.organizationIdentifier });
    await expect.poll(() => row.innerText()).toContain('Annen Leverandør Kunde AS');
    expect(await row.locator('td[data-label="Provider"]').innerText()).toBe(
      `Provider Two\n${test.fixture.otherServiceProviderId}`,
    );
    // Read only: changing a provider's participants is the provider's.
    expect(await row.getByRole('button').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Add a participant' }).count()).toBe(0);
    expect(await axeViolations(page, "the authority's participants")).toEqual([]);
    await page.screenshot({ path: join(shots, 'participants-authority-desktop.png'), fullPage: true });

    await page.evaluate(() => {
      location.hash = '#/service-providers';
    });
    const provider = page.locator('tbody tr', { hasText: 'Provider Two' });
    await expect
      .poll(() => provider.locator('td[data-label="Identifier (--service-provider)"]').innerText())
      .toBe(test.fixture.otherServiceProviderId);
    await context.close();
  });

  it("the public lookup: the organization's name and providers beside its identifier, each document type once", async () => {
    // Two processes with a document type in common, from two providers.
    const free = catalogue.filter((process) => process.visible && !process.restricted);
    const [first, second] = free.flatMap((one) =>
      free
        .filter(
          (other) =>
            other !== one &&
            other.documentTypes.some((type) => one.documentTypes.some((mine) => mine.identifier === type.identifier)),
        )
        .map((other) => [one, other] as const),
    )[0]!;
    const organizationIdentifier = uniqueOrganization();
    await addParticipant(test.app, test.users.serviceProvider, {
      organizationIdentifier,
      name: 'Fjordfisk AS',
      processes: [{ identifier: first.identifier }],
    });
    await addParticipant(test.app, test.users.otherServiceProvider, {
      organizationIdentifier,
      name: 'Fjordfisk AS',
      processes: [{ identifier: second.identifier }],
    });
    for (const width of [WIDTHS.desktop, WIDTHS.phone]) {
      const { context, page } = await open('#/lookup', { width });
      await page.getByLabel('Organization number').fill(organizationIdentifier);
      await page.getByRole('button', { name: 'Find' }).click();
      const result = page.locator('.result article');
      await expect.poll(() => result.locator('h2').innerText()).toBe('Fjordfisk AS');
      expect(await result.locator('dl').innerText()).toMatch(
        new RegExp(
          `Identifier\\s+iso6523-actorid-upis::0192:${organizationIdentifier}.*Served by\\s+Provider One, Provider Two`,
          's',
        ),
      );
      const codes = await result.locator('code').allInnerTexts();
      const types = new Set([...first.documentTypes, ...second.documentTypes].map((type) => type.qualifiedIdentifier));
      for (const type of types)
        expect(
          codes.filter((code) => code === type),
          type,
        ).toHaveLength(1);
      expect(await axeViolations(page, `lookup at ${width}px`)).toEqual([]);
      await page.screenshot({
        path: join(shots, `lookup-organization-${width === WIDTHS.phone ? 'phone' : 'desktop'}.png`),
        fullPage: true,
      });
      await context.close();
    }
  });

  it("the header: a menu button on a phone, one row of the authority's menu on a wide screen", async () => {
    const phone = await open('#/deliveries', { user: test.users.admin, width: WIDTHS.phone });
    await phone.page.locator('h1').waitFor();
    const toggle = phone.page.getByRole('button', { name: 'Menu' });
    const header = phone.page.locator('header.top');
    expect(await header.evaluate((element) => element.getBoundingClientRect().height)).toBeLessThan(70);
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await phone.page.getByRole('navigation', { name: 'Main' }).isVisible()).toBe(false);
    await phone.page.screenshot({ path: join(shots, 'header-closed-phone.png') });
    await toggle.focus();
    await phone.page.keyboard.press('Enter');
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    expect(await phone.page.getByRole('link', { name: 'Access points' }).isVisible()).toBe(true);
    expect(await axeViolations(phone.page, 'open menu on a phone')).toEqual([]);
    await phone.page.screenshot({ path: join(shots, 'header-open-phone.png') });
    // Escape closes it and gives focus back to its button; following a link closes it too.
    await phone.page.keyboard.press('Escape');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await focused(phone.page)).toMatch(/^BUTTON .*Menu/);
    await toggle.click();
    await phone.page.getByRole('link', { name: 'Access points' }).click();
    await expect.poll(() => phone.page.locator('h1').innerText()).toBe('Access points');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await phone.context.close();

    const wide = await open('#/deliveries', { user: test.users.admin });
    await wide.page.locator('h1').waitFor();
    const links = wide.page.getByRole('navigation', { name: 'Main' }).getByRole('link');
    const boxes = await links.evaluateAll((elements) =>
      elements.map((element) => element.getBoundingClientRect()).map(({ top, right }) => ({ top, right })),
    );
    expect(boxes.length).toBeGreaterThanOrEqual(10);
    expect(new Set(boxes.map((box) => box.top)).size).toBe(1);
    // Room for one more entry of the length of the longest ("Access point providers"), on the same row.
    const longest = await links.evaluateAll((elements) =>
      Math.max(...elements.map((element) => element.getBoundingClientRect().width)),
    );
    expect(Math.max(...boxes.map((box) => box.right)) + 16 + longest).toBeLessThan(WIDTHS.desktop - 16);
    expect(await wide.page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
    await wide.page.screenshot({ path: join(shots, 'header-authority-desktop.png') });
    await wide.context.close();
  });

  it("a reload keeps the sign-in of this tab (a session's token, never the password), until sign-out or 30 idle minutes", async () => {
    const user = test.users.serviceProvider;
    const { context, page } = await open('#/participants', { user, signIn: 'form' });
    await page.locator('tbody tr:not(.placeholder)').first().waitFor();
    await page.reload();
    await page.locator('tbody tr:not(.placeholder)').first().waitFor();
    expect(await page.locator('header .who').innerText()).toMatch(/provider-one\s+Service provider/);
    // Only this tab keeps it, and only the token: no password, no cookie, nothing in localStorage.
    const kept = await page.evaluate(
      () =>
        [
          Object.keys(sessionStorage),
          sessionStorage.getItem('registry.session') ?? '',
          localStorage.length,
          document.cookie,
        ] as const,
    );
    expect([kept[0], kept[2], kept[3]]).toEqual([['registry.session'], 0, '']);
    expect(kept[1]).not.toContain(user.password);
    expect(kept[1]).not.toContain(user.authorization.slice('Basic '.length));
    const { token } = JSON.parse(kept[1]) as { token: string };
    const other = await context.newPage();
    await other.goto(`${base}/#/participants`);
    await expect.poll(() => other.locator('main').innerText()).toContain('Sign in to see this page.');
    // Unused for 30 minutes: the service has ended it, and the reloaded tab says so.
    await test.db.query("UPDATE console_sessions SET last_used_at = now() - interval '31 minutes'");
    await page.reload();
    await expect.poll(() => page.locator('main').innerText()).toContain('Sign in to see this page.');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // Signed out: the service ends it too, so a copy of the token opens nothing; a reload finds nothing kept.
    const again = await open('#/participants', { user, signIn: 'form' });
    const kept2 = JSON.parse(await again.page.evaluate(() => sessionStorage.getItem('registry.session') ?? '{}')) as {
      token: string;
    };
    expect(
      (await fetch(`${base}/rest/api/participants?size=1`, { headers: { authorization: `Bearer ${kept2.token}` } }))
        .status,
    ).toBe(200);
    await again.page.getByRole('button', { name: 'Sign out' }).click();
    await expect
      .poll(
        async () =>
          (await fetch(`${base}/rest/api/participants?size=1`, { headers: { authorization: `Bearer ${kept2.token}` } }))
            .status,
      )
      .toBe(401);
    await again.page.reload();
    await again.page.evaluate(() => {
      location.hash = '#/participants';
    });
    await expect.poll(() => again.page.locator('main').innerText()).toContain('Sign in to see this page.');
    expect(await again.page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(
      (await fetch(`${base}/rest/api/participants?size=1`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(401);
    await again.context.close();
    await context.close();
    expect(problems).toEqual([]);
  });
});
