import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, asAdmin } from '../helpers/administration.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { axeViolations, launchChromium } from '../helpers/browser.js';
import { documentTypeForm } from '../helpers/catalogue.js';
import { CONSOLE_ROOT, consoleOpener, settled, WIDTHS } from '../helpers/console.js';
import { testDatabaseKind } from '../helpers/database.js';
import { testOutputDir } from '../helpers/openapi-tools.js';
import { publishedParticipant } from '../helpers/smp.js';

/**
 * What needs a provider's attention on its participants page, in Chromium: what its participants lose at a coming
 * code-list removal date, named by participant and document type; another provider, whose participants lose nothing,
 * sees no such card. Screenshots at 1440 and 390 px.
 */
describe('the coming removals on the participants page, in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const problems: string[] = [];
  const shots = testOutputDir(`web-console-attention-${testDatabaseKind}`);
  let participant: string;
  let documentType: string;
  const removedFrom = new Date(Date.now() + 20 * 86_400_000);

  beforeAll(async () => {
    t = await startTestApp({ console: { root: CONSOLE_ROOT } });
    const published = await publishedParticipant(t);
    participant = published.participant.qualifiedIdentifier;
    documentType = published.documentType.qualifiedIdentifier;
    expectStatus(
      await asAdmin(t).send(
        'PUT',
        `/rest/api/document-types/${published.documentType.identifier}`,
        documentTypeForm({
          qualifiedIdentifier: documentType,
          processes: [{ identifier: published.process.identifier }],
          removedFrom: `${removedFrom.toISOString().slice(0, 10)}T00:00:00Z`,
        }),
        t.users.authority,
      ),
      200,
    );
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

  it('names each participant of the provider that loses a document type, and when', async () => {
    const { context, page } = await open('#/participants', { user: t.users.serviceProvider });
    const card = page.getByRole('region', { name: 'Needs your attention' });
    await expect.poll(() => card.innerText()).toContain(`${participant} loses ${documentType}.`);
    expect(await card.innerText()).toContain('move the participants to the successor before then');
    expect(await axeViolations(page, 'participants with coming removals')).toEqual([]);
    await page.screenshot({ path: join(shots, 'attention-desktop.png'), fullPage: true });
    await page.setViewportSize({ width: WIDTHS.phone, height: 900 });
    await page.screenshot({ path: join(shots, 'attention-phone.png'), fullPage: true });
    await context.close();

    const other = await open('#/participants', { user: t.users.otherServiceProvider });
    await expect.poll(() => other.page.getByRole('region', { name: 'Message Level Status (MLS)' }).count()).toBe(1);
    // Every listing the card reads has answered: its absence is the answer, not a page still loading.
    await settled(other.page);
    expect(await other.page.getByRole('region', { name: 'Needs your attention' }).count()).toBe(0);
    await other.context.close();
    expect(problems).toEqual([]);
  });
});
