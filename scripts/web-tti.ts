// Time to interactive of the provider's console: from navigation start to the participants table rendered
// (signing in on the way, as a user does), in Debian's Chromium. A measurement, not a test: it asserts nothing.
//
//   npm run build && npx tsx scripts/web-tti.ts                      # the built service on a fresh demo registry
//   npx tsx scripts/web-tti.ts --url http://host:8080 --username u --password p   # any running service
//
// With --url the user must be a SERVICE_PROVIDER of that service (the table shown is its participants).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../bench/service.js';
import { launchChromium } from '../test/helpers/browser.js';

const { values } = parseArgs({ options: {
  url: { type: 'string' }, username: { type: 'string' }, password: { type: 'string' }, runs: { type: 'string', default: '7' },
} });

/** The built service on a fresh embedded database: its first start makes the demo set and prints its credentials. */
async function startDemoService(): Promise<{ url: string; username: string; password: string; child: ChildProcess; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'registry-tti-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/server.js'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', MANAGEMENT_PORT: String(await freePort()), REGISTRY_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const credentials = await new Promise<{ username: string; password: string }>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /SERVICE_PROVIDER: username: (\S+)\s+password: (\S+)/.exec(output);
      if (match) resolve({ username: match[1] as string, password: match[2] as string });
    });
    child.on('exit', (code) => reject(new Error(`the service stopped (${code}) before printing credentials:\n${output}`)));
  });
  return { url: `http://127.0.0.1:${port}`, ...credentials, child, dataDir };
}

if (values.url && (!values.username || !values.password)) {
  console.error('--url needs --username and --password of a SERVICE_PROVIDER user of that service');
  process.exit(2);
}
const demo = values.url ? undefined : await startDemoService();
const target = demo ?? { url: values.url as string, username: values.username ?? '', password: values.password ?? '' };
const browser = await launchChromium();
const samples: Array<{ total: number; afterSignIn: number; rows: number }> = [];
try {
  for (let run = 0; run < Number(values.runs); run += 1) {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${target.url}/#/sign-in`);
    await page.getByLabel('Username').fill(target.username);
    await page.getByLabel('Password').fill(target.password);
    const clicked = await page.evaluate(() => performance.now());
    await page.getByRole('button', { name: 'Sign in' }).click();
    // A refused sign-in or a role without the participants page ends the run with the page's own message.
    await Promise.race([
      page.locator('tbody tr:not(.placeholder)').first().waitFor({ timeout: 120_000 }),
      page.locator('[role="alert"]').first().waitFor({ timeout: 120_000 }).then(async () => {
        throw new Error(`no participants table: ${await page.locator('[role="alert"]').first().innerText()}`);
      }),
    ]);
    const rendered = await page.evaluate(() => performance.now());
    samples.push({ total: rendered, afterSignIn: rendered - clicked, rows: await page.locator('tbody tr').count() });
    await context.close();
  }
} finally {
  await browser.close();
  demo?.child.kill('SIGTERM');
  if (demo) rmSync(demo.dataDir, { recursive: true, force: true });
}
const median = (numbers: number[]) => numbers.sort((a, b) => a - b)[Math.floor(numbers.length / 2)] as number;
// The first run also fills the browser's cache of the assets; the median is of every run.
console.log(`provider console on ${demo ? 'the demo registry' : target.url}, ${samples.length} runs, ${samples[0]?.rows} rows shown`);
console.log(`navigation start -> participants table rendered (automated sign-in included): median ${median(samples.map((s) => s.total)).toFixed(0)} ms, first ${samples[0]?.total.toFixed(0)} ms`);
console.log(`sign-in click -> participants table rendered: median ${median(samples.map((s) => s.afterSignIn)).toFixed(0)} ms`);
