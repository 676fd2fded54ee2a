import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogue } from '../../src/code-lists/repository.js';
import { starterCatalogue } from '../../src/setup/starter-catalogue.js';
import {
  accessPointForm,
  addAccessPointProvider,
  addServiceProvider,
  addTransportProfile,
  asAdmin,
  expectStatus,
} from '../helpers/administration.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { axeViolations, launchChromium } from '../helpers/browser.js';
import { testCertificate } from '../helpers/certificates.js';
import { CONSOLE_ROOT, consoleOpener, WIDTHS } from '../helpers/console.js';
import { testDatabaseKind } from '../helpers/database.js';
import { testOutputDir } from '../helpers/openapi-tools.js';
import { byQualified } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';
import { useAccessPointOf } from '../helpers/smp.js';

/**
 * A provider's Message Level Status address in Chromium: on its participants page it sees the address its access
 * point's certificate gives (0242:<Main ID>) and registers it with one button; a provider whose certificates carry no
 * Seat ID is told why it has none; the authority picks a provider and registers its address. Screenshots at 1440 and
 * 390 px.
 */
describe("the MLS address on the provider's participants page, in Chromium", () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let thirdProvider: string;
  const problems: string[] = [];
  const shots = testOutputDir(`web-console-mls-${testDatabaseKind}`);

  beforeAll(async () => {
    t = await startTestApp({ console: { root: CONSOLE_ROOT } });
    await loadCatalogue(t.db, await starterCatalogue());
    const profile = await addTransportProfile(t);
    const accessPoint = expectStatus(
      await asAdmin(t).send(
        'POST',
        '/rest/api/accessPoints',
        accessPointForm((await addAccessPointProvider(t)).identifier, profile.value, {
          endpoints: [
            {
              url: 'https://pno000123.example/as4',
              transportProfile: { value: profile.value },
              certificate: (await testCertificate('PNO000123')).cert,
            },
          ],
        }),
      ),
      201,
    );
    // Provider two keeps the fixture's access point, which has no certificate.
    await useAccessPointOf(t, t.fixture.serviceProviderId, accessPoint.identifier);
    const third = expectStatus(
      await asAdmin(t).send(
        'POST',
        '/rest/api/accessPoints',
        accessPointForm((await addAccessPointProvider(t)).identifier, profile.value, {
          endpoints: [
            {
              url: 'https://pse000456.example/as4',
              transportProfile: { value: profile.value },
              certificate: (await testCertificate('PSE000456')).cert,
            },
          ],
        }),
      ),
      201,
    );
    thirdProvider = (await addServiceProvider(t, third.identifier, 'Provider Three')).identifier;
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const open = consoleOpener(
    () => browser,
    () => base,
    problems,
  );

  it('shows the provider its MLS address and registers it in one step', async () => {
    const { context, page } = await open('#/participants', { user: t.users.serviceProvider });
    const card = page.getByRole('region', { name: 'Message Level Status (MLS)' });
    await expect
      .poll(() => card.innerText())
      .toContain(
        'Your MLS address: iso6523-actorid-upis::0242:000123 (Seat ID PNO000123). Not registered yet: statuses sent to you cannot reach you.',
      );
    expect(await axeViolations(page, 'participants with the MLS address')).toEqual([]);
    await page.screenshot({ path: join(shots, 'mls-unregistered-desktop.png'), fullPage: true });

    await card.getByRole('button', { name: 'Register MLS address' }).click();
    await expect
      .poll(() => card.getByRole('status').innerText())
      .toBe('Registered: iso6523-actorid-upis::0242:000123.');
    await expect.poll(() => card.innerText()).toContain('Registered: statuses reach your access point.');
    expect(await card.getByRole('button', { name: 'Register MLS address' }).count()).toBe(0);
    // The new participant is in the list, named by the provider, and receives the MLS process.
    await expect.poll(() => page.locator('tbody').innerText()).toMatch(/Provider One\s+0242\s+000123/);
    const participant = expectStatus(
      await call(t.app, { url: byQualified('iso6523-actorid-upis::0242:000123'), user: t.users.serviceProvider }),
      200,
    );
    expect(
      participant.processes.map((process: { qualifiedIdentifier: string }) => process.qualifiedIdentifier),
    ).toEqual(['cenbii-procid-ubl::urn:peppol:edec:mls']);
    await page.setViewportSize({ width: WIDTHS.phone, height: 900 });
    await page.screenshot({ path: join(shots, 'mls-registered-phone.png'), fullPage: true });
    await context.close();
    expect(problems).toEqual([]);
  });

  it('lets the authority pick a service provider and register its MLS address', async () => {
    const { context, page } = await open('#/participants', { user: t.users.authority });
    const card = page.getByRole('region', { name: 'Message Level Status (MLS)' });
    const picker = card.getByLabel('Service provider');
    await picker.selectOption({ label: 'Provider Two' });
    await expect
      .poll(() => card.innerText())
      .toContain('The access point certificates of Provider Two carry no Peppol Seat ID');
    expect(await card.getByRole('button').count()).toBe(0);
    await picker.selectOption({ label: 'Provider Three' });
    await expect
      .poll(() => card.innerText())
      .toContain(
        'MLS address of Provider Three: iso6523-actorid-upis::0242:000456 (Seat ID PSE000456). Not registered yet: statuses sent to it cannot reach it.',
      );
    expect(await axeViolations(page, "the authority's MLS card")).toEqual([]);
    await page.screenshot({ path: join(shots, 'mls-authority-desktop.png'), fullPage: true });

    await card.getByRole('button', { name: 'Register MLS address' }).click();
    await expect
      .poll(() => card.getByRole('status').innerText())
      .toBe('Registered: iso6523-actorid-upis::0242:000456.');
    await expect.poll(() => card.innerText()).toContain('Registered: statuses reach its access point.');
    // Registered for that provider: it reads it as its own.
    const [receiver] = expectStatus(
      await call(t.app, { url: `/rest/api/mls-receivers?serviceProvider=${thirdProvider}`, user: t.users.authority }),
      200,
    );
    expect(receiver.addresses).toEqual([
      expect.objectContaining({ qualifiedIdentifier: 'iso6523-actorid-upis::0242:000456', receivesMls: true }),
    ]);
    await page.setViewportSize({ width: WIDTHS.phone, height: 900 });
    await page.screenshot({ path: join(shots, 'mls-authority-phone.png'), fullPage: true });
    await context.close();
    expect(problems).toEqual([]);
  });

  it('tells a provider whose access point certificates carry no Seat ID why it has no MLS address', async () => {
    const { context, page } = await open('#/participants', { user: t.users.otherServiceProvider });
    const card = page.getByRole('region', { name: 'Message Level Status (MLS)' });
    await expect.poll(() => card.innerText()).toContain("Your access point's certificates carry no Peppol Seat ID");
    expect(await card.getByRole('button').count()).toBe(0);
    await page.screenshot({ path: join(shots, 'mls-no-seat-desktop.png'), fullPage: true });
    await context.close();
    expect(problems).toEqual([]);
  });
});
