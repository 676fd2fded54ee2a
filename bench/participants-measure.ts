/**
 * The closing measurements of the participants API, on the machine's PostgreSQL:
 *   1. peak resident memory of the service while it streams every participant (`participants.stream`)
 *      against while it serves one page, each in a fresh service process;
 *   2. the time of a `query` search over all participants, through HTTP and in the database.
 * It fills a scratch database with generate_series and drops it at the end.
 *
 *   npx tsx bench/participants-measure.ts [participants=100000]
 *
 * The service runs as in production (`node server.js` of a build), a fresh process for each memory figure.
 *
 * TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) names the server; the scratch
 * database is created beside `test`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { Role } from '../src/http/auth.js';
import { insertUser } from '../src/users/repository.js';

const count = Number(process.argv[2] ?? 100_000);
const server = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const scratch = `participants_measure_${Date.now().toString(36)}`;
const scratchUrl = Object.assign(new URL(server), { pathname: `/${scratch}` }).toString();
const PORT = 18_000 + Math.floor(Math.random() * 1000);
const PASSWORD = 'measure-secret-password';
const MARKER = '"registrationDate"';
const auth = `Basic ${Buffer.from(`authority:${PASSWORD}`).toString('base64')}`;

async function fill(): Promise<void> {
  const db = openPostgres({ connectionString: scratchUrl, maxConnections: 1 });
  try {
    await migrate(db);
    const [provider] = await db.query<{ id: string }>(
      `INSERT INTO service_providers (title) VALUES ('Measure Provider') RETURNING id`,
    );
    await insertUser(db, { username: 'authority', password: PASSWORD, role: Role.registryAuthority });
    const started = Date.now();
    await db.query(
      `INSERT INTO participants (service_provider_id, icd, organization_identifier, name, registration_date,
                                 last_modification_date, contact_name, contact_email)
       SELECT $1, '0192', lpad(i::text, 9, '0'),
              (ARRAY['Fjord','Berg','Nord','Sol','Vik','Dal','Lie','Haug'])[i % 8 + 1] || ' '
                || (ARRAY['Shipping','Fisk','Bygg','Handel','Data','Kraft','Transport','Regnskap'])[(i / 8) % 8 + 1]
                || ' ' || i || ' AS',
              date '2024-01-01' + (i % 700), date '2024-01-01' + (i % 700), 'Contact ' || i, 'c' || i || '@example.com'
         FROM generate_series(1, $2::int) AS i`,
      [provider?.id, count],
    );
    await db.query('VACUUM ANALYZE participants');
    console.log(`filled ${count} participants in ${Date.now() - started} ms`);
  } finally {
    await db.close();
  }
}

/** The service built as in production, in a directory of its own so that no other build is disturbed. */
const BUILD_ROOT = 'node_modules/.cache/participants-measure';
const BUILD = `${BUILD_ROOT}/dist`;

function build(): void {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', BUILD], { stdio: 'inherit' });
  cpSync('src', BUILD, { recursive: true, filter: (source) => !source.endsWith('.ts') });
  // The build reads the project's package.json beside itself, as dist/ does.
  cpSync('package.json', `${BUILD_ROOT}/package.json`);
}

function startService(nodeArgs: string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeArgs, `${BUILD}/server.js`], {
    env: {
      ...process.env,
      DATABASE_URL: scratchUrl,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      REGISTRY_ADMIN_PASSWORD: PASSWORD,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return (async () => {
    for (let attempt = 0; attempt < 300; attempt += 1) {
      await sleep(200);
      const up = await request('/rest/api/processes?size=1').then(
        () => true,
        () => false,
      );
      if (up) return child;
    }
    child.kill();
    throw new Error('the service did not start');
  })();
}

/** Answers the status, body size and item count of a GET, reading the body as it comes. */
function request(path: string, accept = 'application/json'): Promise<{ status: number; bytes: number; items: number }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port: PORT, path, headers: { authorization: auth, accept } }, (response) => {
      let bytes = 0;
      let items = 0;
      let tail = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        bytes += Buffer.byteLength(chunk);
        // The tail is one character shorter than the marker, so no marker is counted twice.
        const text = tail + chunk;
        items += text.split(MARKER).length - 1;
        tail = text.slice(-(MARKER.length - 1));
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes, items }));
      response.on('error', reject);
    }).on('error', reject);
  });
}

function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

/** Runs `work` against a fresh service, sampling its resident memory every 10 ms. */
async function peakWhile(
  label: string,
  work: () => Promise<{ status: number; bytes: number; items: number }>,
  nodeArgs: string[] = [],
) {
  const child = await startService(nodeArgs);
  const pid = child.pid as number;
  try {
    await request('/rest/api/participants?size=1');
    const before = memoryOf(pid).rss;
    const samples: number[] = [];
    const sampler = setInterval(() => samples.push(memoryOf(pid).rss), 10);
    const started = performance.now();
    const result = await work();
    const elapsed = performance.now() - started;
    clearInterval(sampler);
    const { hwm } = memoryOf(pid);
    const peak = Math.max(before, ...samples);
    // The peak of each quarter of the run: flat memory shows as four similar values.
    const quarters = [0, 1, 2, 3].map((quarter) =>
      Math.max(
        0,
        ...samples.slice(Math.floor((quarter * samples.length) / 4), Math.floor(((quarter + 1) * samples.length) / 4)),
      ),
    );
    console.log(
      `${label}: status ${result.status}, ${result.items} participants, ${(result.bytes / 1e6).toFixed(1)} MB in ${elapsed.toFixed(0)} ms; ` +
        `RSS before ${(before / 1024).toFixed(0)} MiB, peak sampled ${(peak / 1024).toFixed(0)} MiB ` +
        `(by quarter ${quarters.map((kib) => (kib / 1024).toFixed(0)).join('/')}), VmHWM ${(hwm / 1024).toFixed(0)} MiB`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

async function searchTimes(): Promise<void> {
  const child = await startService();
  try {
    for (const query of ['4711', 'Fjord', '00004', 'zzz-nothing']) {
      const path = `/rest/api/participants?query=${encodeURIComponent(query)}&size=30`;
      await request(path);
      const times: number[] = [];
      for (let run = 0; run < 10; run += 1) {
        const started = performance.now();
        await request(path);
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      console.log(
        `query=${query}: median ${times[5]?.toFixed(1)} ms, max ${times[9]?.toFixed(1)} ms over 10 HTTP requests (page of 30 + total)`,
      );
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  const db = openPostgres({ connectionString: scratchUrl, maxConnections: 1 });
  try {
    const plan = await db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM participants pa
        WHERE lower(pa.name) LIKE '%fjord%' OR pa.organization_identifier LIKE 'fjord%'`,
    );
    console.log(plan.map((row) => row['QUERY PLAN']).join('\n'));
  } finally {
    await db.close();
  }
}

build();
const admin = openPostgres({ connectionString: server.toString(), maxConnections: 1 });
await admin.query(`CREATE DATABASE ${scratch}`);
try {
  await fill();
  await peakWhile('one page (size 30)', () => request('/rest/api/participants?size=30'));
  await peakWhile('one page (size 2000)', () => request('/rest/api/participants?size=2000'));
  const tenth = new Date(Date.UTC(2024, 0, 1 + 70)).toISOString().slice(0, 10);
  await peakWhile(`stream of a tenth (to ${tenth})`, () =>
    request(
      `/rest/api/participants?lastModificationDateTo=${tenth}`,
      'application/vnd.registry.participants.stream.v1+json',
    ),
  );
  await peakWhile(`stream of all ${count}`, () =>
    request('/rest/api/participants', 'application/vnd.registry.participants.stream.v1+json'),
  );
  // V8 collects lazily while the heap is far below its limit; a small limit shows what the stream really keeps.
  await peakWhile(
    `stream of all ${count}, old space capped at 64 MiB`,
    () => request('/rest/api/participants', 'application/vnd.registry.participants.stream.v1+json'),
    ['--max-old-space-size=64'],
  );
  await searchTimes();
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`);
  await admin.close();
  rmSync(BUILD_ROOT, { recursive: true, force: true });
}
