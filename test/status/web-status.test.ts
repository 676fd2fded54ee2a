import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedKey, SmpKeys } from '../../src/smp/keys.js';
import { add, addAccessPointProvider, addTransportProfile } from '../helpers/administration.js';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { axeViolations, launchChromium } from '../helpers/browser.js';
import { CONSOLE_ROOT } from '../helpers/console.js';
import { testCertificate } from '../helpers/certificates.js';
import { testDatabaseKind } from '../helpers/database.js';
import { testOutputDir } from '../helpers/openapi-tools.js';
import { addParticipant } from '../helpers/participants.js';

/**
 * The authority's landing page in Chromium: signed in, ADMIN and REGISTRY_AUTHORITY land on the status, what needs
 * attention first (a failing SML delivery, the SMP certificate and an access point certificate expiring soon); the
 * access points page marks a certificate that expires within 30 days. Screenshots at 1440 and 390 px.
 */
const DAY = 24 * 3600 * 1000;
const WIDTHS = { desktop: 1440, phone: 390 } as const;
const inDays = (days: number) => new Date(Date.now() + days * DAY);

describe('the status page in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const shots = testOutputDir(`web-status-${testDatabaseKind}`);

  beforeAll(async () => {
    const smp = await testCertificate('SMP expiring', inDays(-1), inDays(20));
    t = await startTestApp({
      console: { root: CONSOLE_ROOT },
      smp: { keys: new SmpKeys(checkedKey(smp.key, smp.cert, false)) },
      // An SML nobody answers at: the delivery fails, and its retry waits long enough to stay failed.
      sml: { url: 'http://127.0.0.1:9/', smpId: 'STATUS-PAGE-SMP', timeoutMs: 500 },
      delivery: { retryMs: { first: 600_000, max: 600_000 } },
      // Two wrong passwords lock a username at an address, without slowing: a locked sign-in needs attention.
      signInThrottle: { freeFailures: 5, maxFailures: 2 },
    });
    for (const attempt of ['first-wrong-password', 'second-wrong-password']) {
      const answer = await t.app.inject({
        url: '/rest/api/accessPoints',
        remoteAddress: '203.0.113.7',
        headers: { authorization: `Basic ${Buffer.from(`guessed-user:${attempt}`).toString('base64')}` },
      });
      expect(answer.statusCode).toBe(401);
    }
    const soon = await testCertificate('ap-soon.example', inDays(-1), inDays(10));
    const later = await testCertificate('ap-later.example', inDays(-1), inDays(200));
    const provider = await addAccessPointProvider(t);
    const profile = await addTransportProfile(t);
    const endpoint = (url: string, certificate: string) => ({
      url,
      transportProfile: { value: profile.value },
      certificate,
    });
    await add(t, '/rest/api/accessPoints', {
      title: 'Expiring AP',
      provider: { identifier: provider.identifier },
      endpoints: [
        endpoint('https://ap-soon.example/as4', soon.cert),
        endpoint('https://ap-later.example/as4', later.cert),
      ],
    });
    await addParticipant(t.app, t.users.serviceProvider, { name: 'Status Page AS' });
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Signs in on the sign-in page as a person does, at `width`; the page the console lands on is the caller's to see. */
  async function signedIn(user: TestUser, width: number): Promise<Page> {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${base}/#/sign-in`);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    return page;
  }

  /**
   * What needs attention, item by item, once the SML delivery has failed and the sign-in locks are read (the page reads
   * them apart from the status, so either may show first).
   */
  async function attentionItems(page: Page): Promise<string[]> {
    const items = page.locator('ul.attention li');
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return (await items.allInnerTexts()).join('\n');
        },
        { timeout: 20_000 },
      )
      .toMatch(/The SML delivery fails[^]*sign-in is locked/);
    return items.allInnerTexts();
  }

  it('lands the ADMIN on the status: problems first, then certificates expiring, with where to act; 0 axe violations at 1440 and 390 px', async () => {
    const violations: string[] = [];
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(t.users.admin, width);
      await expect.poll(() => page.locator('h1').innerText()).toBe('Status');
      expect(new URL(page.url()).hash).toBe('#/status');
      const items = await attentionItems(page);
      expect(items[0]).toMatch(
        /^Problem: The SML delivery fails \(\d+ failed attempts? since the last success\): The SML could not be reached; the delivery is tried again by itself\. Deliveries$/,
      );
      // In words, without the address the socket named.
      expect(items[0]).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
      expect(items.slice(1)).toEqual([
        'Warning: The SMP signs with a self-signed certificate (CN=SMP expiring): no network client trusts it.',
        expect.stringMatching(
          /^Warning: The certificate of Expiring AP \(https:\/\/ap-soon\.example\/as4\) expires on .+, in 9 days\. Access points$/,
        ),
        expect.stringMatching(/^Warning: The SMP certificate expires on .+, in 19 days\.$/),
        'Warning: 1 sign-in is locked after too many wrong passwords (a username at one address); an administrator lifts locks on the users page.',
      ]);
      expect(await page.getByRole('link', { name: 'Access points' }).last().getAttribute('href')).toBe(
        '#/access-points',
      );
      const facts = await page.locator('main').innerText();
      expect(facts).toMatch(/Version\s+\d+\.\d+\.\d+ · Commit [0-9a-f]{12} · runs from its sources/);
      expect(facts).toMatch(
        new RegExp(
          `Database\\s+${testDatabaseKind === 'postgres' ? 'PostgreSQL' : 'Embedded \\(PGlite\\)'} · Migration \\d{3}_\\w+\\.sql`,
        ),
      );
      expect(facts).toMatch(
        /SMP certificate\s+CN=SMP expiring, issued by CN=SMP expiring, valid until .+ \(19 days left\)/,
      );
      expect(facts).toMatch(/SML\s+http:\/\/127\.0\.0\.1:9\/ · SMP ID STATUS-PAGE-SMP/);
      expect(facts).toMatch(/Participants\s+1\b/);
      violations.push(...(await axeViolations(page, `status at ${width}px`)));
      await page.screenshot({ path: join(shots, `status-${name}-${width}.png`), fullPage: true });
      await page.context().close();
    }
    expect(violations).toEqual([]);
  }, 120_000);

  it('lands the REGISTRY_AUTHORITY on it too, in Norwegian on asking; a provider does not see it', async () => {
    const page = await signedIn(t.users.authority, WIDTHS.desktop);
    await expect.poll(() => page.locator('h1').innerText()).toBe('Status');
    await page.getByLabel('Language').selectOption('nb');
    await expect.poll(() => page.locator('#attention-heading').innerText()).toBe('Trenger oppmerksomhet');
    expect(await page.locator('ul.attention').innerText()).toMatch(
      /Advarsel: SMP-sertifikatet utløper .+, om 19 dager\./,
    );
    await page.context().close();

    const provider = await signedIn(t.users.serviceProvider, WIDTHS.desktop);
    await expect.poll(() => provider.locator('h1').innerText()).toBe('Participants');
    expect(await provider.getByRole('navigation', { name: 'Main' }).innerText()).not.toContain('Status');
    await provider.evaluate(() => {
      location.hash = '#/status';
    });
    await expect.poll(() => provider.locator('main').innerText()).toContain('This page is not for your role.');
    await provider.context().close();
  }, 60_000);

  it('the access points page marks a certificate that expires within 30 days, and not one that expires later', async () => {
    for (const [name, width] of Object.entries(WIDTHS)) {
      const page = await signedIn(t.users.admin, width);
      await expect.poll(() => page.locator('h1').innerText()).toBe('Status');
      await page.evaluate(() => {
        location.hash = '#/access-points';
      });
      const row = page.locator('tbody tr', { hasText: 'Expiring AP' });
      const soon = row.locator('li', { hasText: 'ap-soon.example' }).locator('.expiry');
      await expect
        .poll(() => soon.innerText())
        .toMatch(/^certificate expires \d{1,2} [A-Z][a-z]{2,3} \d{4}\s*\(expires in 9 days\)$/);
      expect(await soon.getAttribute('class')).toBe('expiry expiring');
      const later = row.locator('li', { hasText: 'ap-later.example' }).locator('.expiry');
      expect(await later.innerText()).toMatch(/^certificate expires \d{1,2} [A-Z][a-z]{2,3} \d{4}$/);
      expect(await later.getAttribute('class')).toBe('expiry valid');
      expect(await axeViolations(page, `access points at ${width}px`)).toEqual([]);
      await page.screenshot({ path: join(shots, `access-points-${name}-${width}.png`), fullPage: true });
      await page.context().close();
    }
  }, 60_000);
});
