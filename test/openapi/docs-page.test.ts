import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { launchChromium } from '../helpers/browser.js';
import { testDatabaseKind } from '../helpers/database.js';
import { testOutputDir } from '../helpers/openapi-tools.js';

describe('the docs page at /rest/resources/docs', () => {
  const test = useTestApp({ listen: true });
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('renders the description from assets the service serves itself under its own content security policy, with no failed request and no console error', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1800 } });
    const problems: string[] = [];
    const requested: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('requestfailed', (request) =>
      problems.push(`failed request: ${request.url()} ${request.failure()?.errorText}`),
    );
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
    });
    // No CDN, no internet: anything not served by the service itself is refused and reported.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      requested.push(url);
      return url.startsWith(test.base) || url.startsWith('data:') ? route.continue() : route.abort();
    });

    const loaded = await page.goto(`${test.base}/rest/resources/docs`);
    // Its own policy: no inline script, no other origin, no framing (a violation would be a console error below).
    expect(loaded?.headers()['content-security-policy']).toMatch(
      /default-src 'self';.*script-src 'self';.*frame-ancestors 'none'/,
    );
    await page.locator('.swagger-ui .info .title').waitFor();
    await page.locator('.opblock').first().waitFor();

    const description = (await test.app.inject({ url: '/v3/api-docs' })).json() as { paths: Record<string, object> };
    const operationCount = Object.values(description.paths).reduce(
      (count, item) => count + Object.keys(item).length,
      0,
    );
    // The operations are a virtual list (only those near the viewport are in the page): scroll through it.
    const seen = new Set<string>();
    const tags = new Set<string>();
    // Down, a third of the window at a time, until `selector` is in the page (or the end is reached), in the page.
    const scrollDownTo = (selector: string) =>
      page.evaluate(
        (wanted) =>
          new Promise<void>((resolve) => {
            const step = (left: number) => {
              const atEnd = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight;
              if (document.querySelector(wanted) !== null || atEnd || left === 0) return resolve();
              window.scrollBy(0, window.innerHeight / 3);
              requestAnimationFrame(() => requestAnimationFrame(() => step(left - 1)));
            };
            step(400);
          }),
        selector,
      );
    // What is in the page, then a scroll: one round trip to the browser per step.
    const readAndScrollDown = () =>
      page.evaluate(
        () =>
          new Promise<{ operations: string[]; tags: string[]; atEnd: boolean }>((resolve) => {
            const ids = (selector: string) => [...document.querySelectorAll(selector)].map((element) => element.id);
            const [operations, tags] = [ids('.opblock'), ids('.opblock-tag')];
            const atEnd = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight;
            window.scrollBy(0, window.innerHeight / 3);
            requestAnimationFrame(() => requestAnimationFrame(() => resolve({ operations, tags, atEnd })));
          }),
      );
    for (let step = 0; step < 400; step += 1) {
      const inPage = await readAndScrollDown();
      for (const id of inPage.operations) seen.add(id);
      for (const tag of inPage.tags) tags.add(tag);
      if (inPage.atEnd) break;
    }
    expect(seen.size).toBe(operationCount);
    expect(tags.size).toBeGreaterThanOrEqual(5);
    await page.evaluate(() => window.scrollTo(0, 0));
    await expect.poll(() => page.locator('.swagger-ui .info').innerText()).toContain('Vocabulary');
    const info = page.locator('.swagger-ui .info');
    expect(await info.locator('h2', { hasText: 'Getting credentials' }).count()).toBe(1);
    expect(await info.locator('table').count()).toBeGreaterThanOrEqual(2);
    expect(await info.locator('pre code', { hasText: 'curl' }).count()).toBeGreaterThan(0);

    // One folder per vitest project: both run at once.
    const shots = testOutputDir(`docs-page-${testDatabaseKind}`);
    const screenshot = join(shots, 'docs-page.png');
    await page.screenshot({ path: screenshot });
    const operationsShot = join(shots, 'docs-page-operations.png');
    const firstTag = page.locator('.opblock-tag').first();
    await scrollDownTo('.opblock-tag');
    await firstTag.scrollIntoViewIfNeeded();
    await page.screenshot({ path: operationsShot });

    // An operation opens with its parameters, roles and the media types of its responses.
    const find = page.locator('#operations-processes-findProcesses');
    await scrollDownTo('#operations-processes-findProcesses');
    await find.locator('.opblock-summary').click();
    await find.locator('.opblock-body').waitFor();
    expect(await find.locator('.opblock-description-wrapper').innerText()).toContain('Roles: SERVICE_PROVIDER');
    expect(await find.locator('tr[data-param-name="size"]').innerText()).toMatch(/default.*30/is);
    const mediaTypes = await find.locator('.response-control-media-type select option').allInnerTexts();
    expect(mediaTypes).toContain('application/vnd.registry.processes.stream.v1+json');
    const operationShot = join(shots, 'docs-page-find-processes.png');
    await find.screenshot({ path: operationShot });
    console.log(`docs page screenshots: ${screenshot} ${operationsShot} ${operationShot}`);

    expect(requested.filter((url) => !url.startsWith(test.base) && !url.startsWith('data:'))).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);
});
