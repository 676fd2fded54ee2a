import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import type { TestUser } from './app.js';
import { PROJECT_ROOT } from './openapi-tools.js';

/** The widths the console is looked at: a phone, and a desktop screen. */
export const WIDTHS = { phone: 390, desktop: 1440 } as const;

/** The console as the build made it (the suite's global set-up makes the build current): what an operator serves. */
export const CONSOLE_ROOT = join(PROJECT_ROOT, 'dist', 'console');

/** Where the console keeps a tab's sign-in (web/src/session.ts). */
const STORED_SESSION = 'registry.session';

export interface OpenOptions {
  user?: TestUser;
  /**
   * How `user` is signed in. `session` (the default): the service opens a session for the user (POST
   * /rest/api/sessions, as the sign-in form does) and the tab starts with it kept, as a tab that was signed in and
   * reloaded; the page is loaded once, at `hash`. `form`: through the sign-in form, for a test about signing in.
   */
  signIn?: 'session' | 'form';
  width?: number;
  /** Another origin than the suite's service. */
  at?: string;
}

/** The requests each opened page has under way, for `settled`. */
const underWay = new WeakMap<Page, { requests: Set<Request>; started: number }>();

function trackRequests(page: Page): void {
  const tracked = { requests: new Set<Request>(), started: 0 };
  underWay.set(page, tracked);
  page.on('request', (request) => {
    tracked.requests.add(request);
    tracked.started += 1;
  });
  const done = (request: Request) => tracked.requests.delete(request);
  page.on('requestfinished', done);
  page.on('requestfailed', done);
}

/**
 * Waits until nothing the page asked for is under way, and the page has drawn two frames and run its timers due
 * since without asking for more: what Playwright's `networkidle` waits for, without its fixed 500 ms of quiet. A page
 * the opener did not open waits for `networkidle`.
 */
export async function settled(page: Page, timeoutMs = 20_000): Promise<void> {
  const tracked = underWay.get(page);
  if (!tracked) return page.waitForLoadState('networkidle', { timeout: timeoutMs });
  const until = Date.now() + timeoutMs;
  for (;;) {
    while (tracked.requests.size > 0) {
      if (Date.now() > until)
        throw new Error(`still loading after ${timeoutMs} ms: ${[...tracked.requests].map((r) => r.url()).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const started = tracked.started;
    await page.evaluate(
      () =>
        new Promise<void>((resolve) =>
          requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => setTimeout(resolve, 20), 0))),
        ),
    );
    if (tracked.requests.size === 0 && tracked.started === started) return;
  }
}

/** A session the service opens for `user`, as the sign-in form opens one: what the console keeps in its tab. */
async function openedSession(origin: string, user: TestUser): Promise<string> {
  const response = await fetch(`${origin}/rest/api/sessions`, {
    method: 'POST',
    headers: { authorization: user.authorization, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = await response.text();
  if (response.status !== 201) throw new Error(`no session for ${user.username}: ${response.status} ${body}`);
  const { token, username, role } = JSON.parse(body) as { token: string; username: string; role: string };
  return JSON.stringify({ username, role, token });
}

/**
 * Opens the console of `base` in a fresh browser context (English, the given width), signed in as `user` when given
 * (see `OpenOptions.signIn`), at `hash`. What goes wrong on a page (a console error, a script error, a missing file)
 * is added to `problems`, and so is a request to any other origin: the console's CSP refuses it (`'self'` for all
 * it loads), and the browser resolves no host but the loopback (`launchChromium`).
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
    if (options.user && options.signIn === 'form') {
      await page.goto(`${origin}/`);
      await signInOn(page, options.user);
      await page.evaluate((target) => {
        location.hash = target;
      }, hash);
      return { context, page };
    }
    if (options.user) {
      // Kept in this tab before its first page runs, once: a reload, or a sign-out and a reload, finds what the
      // console itself left there.
      await page.addInitScript(
        ({ key, value }) => {
          if (window.name === 'registry-test-signed-in') return;
          window.name = 'registry-test-signed-in';
          sessionStorage.setItem(key, value);
        },
        { key: STORED_SESSION, value: await openedSession(origin, options.user) },
      );
    }
    await page.goto(`${origin}/${hash}`);
    return { context, page };
  };
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
