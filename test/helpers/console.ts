import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import type { TestUser } from './app.js';
import { PROJECT_ROOT } from './openapi-tools.js';

/** The widths the console is looked at: a phone, and a desktop screen. */
export const WIDTHS = { phone: 390, desktop: 1440 } as const;

/** The console as the build made it (the suite's global set-up makes the build current): what an operator serves. */
export const CONSOLE_ROOT = join(PROJECT_ROOT, 'dist', 'console');

export interface OpenOptions {
  user?: TestUser;
  width?: number;
  /** Another origin than the suite's service. */
  at?: string;
}

/**
 * Opens the console of `base` in a fresh browser context (English, the given width), signed in as `user` through
 * the sign-in form when given, at `hash`. What goes wrong on a page (a console error, a script error, a missing
 * file) is added to `problems`; requests to any other host are refused.
 */
export function consoleOpener(browser: () => Browser, base: () => string, problems: string[]) {
  return async function open(
    hash: string,
    options: OpenOptions = {},
  ): Promise<{ context: BrowserContext; page: Page }> {
    const origin = options.at ?? base();
    const context = await browser().newContext({
      acceptDownloads: true,
      locale: 'en-US',
      viewport: { width: options.width ?? WIDTHS.desktop, height: 900 },
    });
    const page = await context.newPage();
    trackRequests(page);
    page.on('console', (message) => {
      // A 4xx the console expects (a probe, a refused form) is logged by Chromium as a failed resource.
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text()))
        problems.push(`console error: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // The API's 4xx are expected; a file of the page that is missing (such as its icon) is not.
    page.on('response', (response) => {
      if (response.status() === 404 && !new URL(response.url()).pathname.startsWith('/rest/'))
        problems.push(`404 for ${response.url()}`);
    });
    await page.route('**/*', (route) =>
      /^(blob:)?https?:\/\/127\.0\.0\.1:/.test(route.request().url()) &&
      route.request().url().includes(new URL(origin).host)
        ? route.continue()
        : route.abort(),
    );
    await page.goto(`${origin}/`);
    if (options.user) await signInOn(page, options.user);
    await page.evaluate((target) => {
      location.hash = target;
    }, hash);
    return { context, page };
  };
}

/** The requests each opened page has in flight. */
const inFlight = new WeakMap<Page, Set<Request>>();

function trackRequests(page: Page): void {
  const pending = new Set<Request>();
  page.on('request', (request) => pending.add(request));
  page.on('requestfinished', (request) => pending.delete(request));
  page.on('requestfailed', (request) => pending.delete(request));
  inFlight.set(page, pending);
}

/** How long a page must have had no request in flight to count as settled. */
const QUIET_MS = 100;

/**
 * Resolves once a page that `open` opened has had no request in flight for a tenth of a second: every answer its
 * views asked for is in. What Playwright's `networkidle` waits for, without its half second of quiet on every page
 * (a fifth of the page tests' time); a request still open after `timeoutMs` fails, naming it.
 */
export async function requestsSettled(page: Page, timeoutMs = 20_000): Promise<void> {
  const pending = inFlight.get(page);
  if (!pending) throw new Error('requestsSettled: not a page that open() opened');
  const deadline = Date.now() + timeoutMs;
  let quietSince = Date.now();
  for (;;) {
    if (pending.size > 0) quietSince = Date.now();
    else if (Date.now() - quietSince >= QUIET_MS) return;
    if (Date.now() > deadline)
      throw new Error(
        `still in flight after ${timeoutMs} ms: ${[...pending].map((request) => request.url()).join(', ')}`,
      );
    await sleep(20);
  }
}

/** Signs in through the form; the sign-out button is in the header (in the collapsed menu on a phone). */
export async function signInOn(page: Page, user: TestUser): Promise<void> {
  await page.evaluate(() => {
    location.hash = '#/sign-in';
  });
  await page.getByLabel('Username').fill(user.username);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out', includeHidden: true }).waitFor({ state: 'attached' });
}
