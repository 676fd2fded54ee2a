// Time to interactive of the provider's console: from navigation start to the participants table rendered
// (signing in on the way, as a user does), in Debian's Chromium. A measurement, not a test: it asserts nothing.
//
//   npm run build && npx tsx scripts/web-tti.ts                      # the built service on a fresh demo registry
//   npx tsx scripts/web-tti.ts --url http://host:8080 --username u --password p   # any running service
//   npm run build && npx tsx scripts/web-tti.ts --participants 1000000           # the benchmark's data set
//
// With --url the user must be a SERVICE_PROVIDER of that service (the table shown is its participants).
// With --participants the benchmark's data set (bench/dataset.ts) is built in a fresh database on the machine's
// PostgreSQL (--database-url, an admin URL), the built service started on it, and the first of its 50 providers
// signs in (a fiftieth of the participants are its own; its page is searched among all of them); the database is
// dropped at the end.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildDataset, dropDatabase } from '../bench/dataset.js';
import { freePort, startProcess } from '../bench/service.js';
import { launchChromium } from '../test/helpers/browser.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    username: { type: 'string' },
    password: { type: 'string' },
    runs: { type: 'string', default: '7' },
    participants: { type: 'string' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});

interface Target {
  url: string;
  username: string;
  password: string;
  stop(): Promise<void>;
}

/** The built service on a fresh embedded database: its first start makes the demo set and prints its credentials. */
async function startDemoService(): Promise<Target> {
  const dataDir = mkdtempSync(join(tmpdir(), 'registry-tti-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/server.js'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      MANAGEMENT_PORT: String(await freePort()),
      REGISTRY_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const credentials = await new Promise<{ username: string; password: string }>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      // Standard output is a pipe: the first start puts its message into a file and logs where.
      const file = /the generated passwords are in (\S+) \(/.exec(output)?.[1];
      const match = file && /SERVICE_PROVIDER: username: (\S+)\s+password: (\S+)/.exec(readFileSync(file, 'utf8'));
      if (match) resolve({ username: match[1] as string, password: match[2] as string });
    });
    child.on('exit', (code) =>
      reject(new Error(`the service stopped (${code}) before printing credentials:\n${output}`)),
    );
  });
  return {
    url: `http://127.0.0.1:${port}`,
    ...credentials,
    async stop() {
      child.kill('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The built service on the benchmark's data set of `participants`, signed in as its first provider. */
async function startBenchService(participants: number): Promise<Target> {
  const adminUrl = values['database-url'] as string;
  const log = (message: string) => console.error(`[web-tti] ${message}`);
  const data = await buildDataset({
    adminUrl,
    participants,
    workers: 2,
    codeListDir: join(import.meta.dirname, '../reference-data/peppol-codelists-v9.7'),
    log,
  });
  log(`data set of ${participants} participants built in ${data.buildSeconds.toFixed(0)} s`);
  const port = await freePort();
  const service = await startProcess(
    ['dist/server.js'],
    {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: data.databaseUrl,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      REGISTRY_ADMIN_PASSWORD: data.password,
      MANAGEMENT_PORT: String(await freePort()),
    },
    port,
    join(tmpdir(), `registry-tti-${process.pid}.log`),
    '/rest/api/processes',
  );
  return {
    url: service.url,
    username: data.providers[0]?.username as string,
    password: data.password,
    async stop() {
      await service.stop();
      await dropDatabase(adminUrl, data.databaseName);
    },
  };
}

function startTarget(): Promise<Target> {
  if (values.url)
    return Promise.resolve({
      url: values.url,
      username: values.username ?? '',
      password: values.password ?? '',
      stop: async () => {},
    });
  if (values.participants) return startBenchService(Number(values.participants));
  return startDemoService();
}

if (values.url && (!values.username || !values.password)) {
  console.error('--url needs --username and --password of a SERVICE_PROVIDER user of that service');
  process.exit(2);
}
const target = await startTarget();
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
      page
        .locator('[role="alert"]')
        .first()
        .waitFor({ timeout: 120_000 })
        .then(async () => {
          throw new Error(`no participants table: ${await page.locator('[role="alert"]').first().innerText()}`);
        }),
    ]);
    const rendered = await page.evaluate(() => performance.now());
    samples.push({ total: rendered, afterSignIn: rendered - clicked, rows: await page.locator('tbody tr').count() });
    await context.close();
  }
} finally {
  await browser.close();
  await target.stop();
}
const median = (numbers: number[]) => numbers.sort((a, b) => a - b)[Math.floor(numbers.length / 2)] as number;
// The first run also fills the browser's cache of the assets; the median is of every run.
const registry =
  values.url ?? (values.participants ? `the benchmark's ${values.participants} participants` : 'the demo registry');
console.log(`provider console on ${registry}, ${samples.length} runs, ${samples[0]?.rows} rows shown`);
console.log(
  `navigation start -> participants table rendered (automated sign-in included): median ${median(samples.map((s) => s.total)).toFixed(0)} ms, first ${samples[0]?.total.toFixed(0)} ms`,
);
console.log(
  `sign-in click -> participants table rendered: median ${median(samples.map((s) => s.afterSignIn)).toFixed(0)} ms`,
);
