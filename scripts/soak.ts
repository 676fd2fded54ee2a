/**
 * `npm run soak`: the built service under a mixed load for SOAK_MINUTES (default 10), with its memory and
 * open connections sampled from /metrics and /proc every SOAK_SAMPLE_SECONDS (default 30). Prints the
 * samples and the trend of memory after the warm-up; fails on any 5xx, lost request or growth trend.
 *
 * By hand, not in CI. Embedded database in a fresh temp directory, or PostgreSQL with SOAK_DATABASE_URL
 * (a database of its own: the soak writes to it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { norwegianNumberOf } from '../bench/keys.js';
import {
  basic,
  call,
  freshStorage,
  provision,
  startService,
  stopService,
  type Actors,
  type Answer,
  type Call,
} from '../test/reliability/harness/service.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 30);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 12);
/** Memory may grow this much per minute after the warm-up before it counts as a trend. */
const GROWTH_LIMIT_MB_PER_MINUTE = Number(process.env.SOAK_GROWTH_LIMIT ?? 1);

interface Sample {
  minute: number;
  rssMb: number;
  heapMb: number;
  openConnections: number;
  openFiles: number;
  dbConnections: number;
  requests: number;
}

const counts = { requests: 0, serverErrors: 0, failures: 0, byStatus: new Map<number, number>() };
const agent = new http.Agent({ keepAlive: true, maxSockets: WORKERS });

async function send(baseUrl: string, request: Call): Promise<Answer | undefined> {
  try {
    const answer = await call(baseUrl, { ...request, agent });
    counts.requests += 1;
    counts.byStatus.set(answer.status, (counts.byStatus.get(answer.status) ?? 0) + 1);
    if (answer.status >= 500) counts.serverErrors += 1;
    return answer;
  } catch {
    counts.failures += 1;
    return undefined;
  }
}

/** One round of what providers and readers do: searches, reads, a participant's life, a typo'd password. */
async function mixedRound(baseUrl: string, actors: Actors, worker: number, round: number) {
  const [provider] = actors.providers as [Actors['providers'][number]];
  const organization = norwegianNumberOf(worker * 100_000 + round, 5, 4);
  const qualified = encodeURIComponent(`iso6523-actorid-upis::0192:${organization}`);
  await send(baseUrl, { path: '/rest/api/processes?size=20&sort=title' });
  await send(baseUrl, { path: '/rest/api/processes', accept: 'application/vnd.registry.processes.stream.v1+json' });
  await send(baseUrl, {
    method: 'POST',
    path: '/rest/api/participants',
    authorization: provider.authorization,
    body: {
      icd: '0192',
      organizationIdentifier: organization,
      name: `Soak ${worker} ${round}`,
      processes: [],
      contact: { name: 'Soak' },
    },
  });
  await send(baseUrl, { path: `/rest/api/participants/${qualified}`, authorization: provider.authorization });
  await send(baseUrl, {
    method: 'PUT',
    path: `/rest/api/participants/${qualified}`,
    authorization: provider.authorization,
    body: { processes: [], contact: { name: `Soak ${round}` } },
  });
  await send(baseUrl, { path: `/rest/api/participants?query=soak${worker}&size=10`, authorization: actors.admin });
  await send(baseUrl, {
    path: '/rest/api/participants',
    authorization: provider.authorization,
    accept: 'application/vnd.registry.participants.stream.v1+json',
  });
  if (round % 2 === 0)
    await send(baseUrl, {
      method: 'DELETE',
      path: `/rest/api/participants/${qualified}`,
      authorization: provider.authorization,
    });
  await send(baseUrl, { path: `/rest/api/processes/00000000-0000-4000-8000-00000000000${worker % 10}` });
  if (round % 10 === 0)
    await send(baseUrl, {
      path: '/rest/api/participants',
      authorization: basic(`nobody-${worker}-${round}`, 'wrong-password'),
    });
}

function metric(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}${labels} `));
  return line ? Number(line.split(' ')[1]) : Number.NaN;
}

async function sample(managementUrl: string, pid: number, started: number): Promise<Sample> {
  const text = (await call(managementUrl, { path: '/metrics' })).body;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return {
    minute: (Date.now() - started) / 60_000,
    rssMb: rssKb / 1024,
    heapMb: metric(text, 'nodejs_heap_size_used_bytes') / 1024 / 1024,
    openConnections: metric(text, 'http_open_connections'),
    openFiles: readdirSync(`/proc/${pid}/fd`).length,
    dbConnections: metric(text, 'db_pool_connections', '{state="total"}'),
    requests: counts.requests,
  };
}

/** Least-squares slope of `value` over minutes. */
function slope(samples: Sample[], value: (sample: Sample) => number): number {
  const n = samples.length;
  const meanX = samples.reduce((sum, s) => sum + s.minute, 0) / n;
  const meanY = samples.reduce((sum, s) => sum + value(s), 0) / n;
  const covariance = samples.reduce((sum, s) => sum + (s.minute - meanX) * (value(s) - meanY), 0);
  const variance = samples.reduce((sum, s) => sum + (s.minute - meanX) ** 2, 0);
  return variance === 0 ? 0 : covariance / variance;
}

async function main() {
  const storage = process.env.SOAK_DATABASE_URL
    ? { env: { DATABASE_URL: process.env.SOAK_DATABASE_URL }, drop: async () => undefined }
    : await freshStorage('embedded');
  const service = await startService(storage.env, 120_000, 'built', 1000);
  const pid = service.child.pid as number;
  try {
    const actors = await provision(service.url);
    const started = Date.now();
    const deadline = started + MINUTES * 60_000;
    const samples: Sample[] = [await sample(service.managementUrl, pid, started)];
    const sampler = setInterval(() => {
      void sample(service.managementUrl, pid, started).then((next) => {
        samples.push(next);
        console.log(
          `${next.minute.toFixed(1).padStart(5)} min  rss ${next.rssMb.toFixed(1)} MB  heap ${next.heapMb.toFixed(1)} MB  ` +
            `connections ${next.openConnections}  fds ${next.openFiles}  db ${next.dbConnections}  requests ${next.requests}  ` +
            `5xx ${counts.serverErrors}  failed ${counts.failures}`,
        );
      });
    }, SAMPLE_SECONDS * 1000);
    await Promise.all(
      Array.from({ length: WORKERS }, async (_, worker) => {
        for (let round = 0; Date.now() < deadline; round += 1) await mixedRound(service.url, actors, worker, round);
      }),
    );
    clearInterval(sampler);
    await sleep(1000);
    samples.push(await sample(service.managementUrl, pid, started));
    report(samples);
  } finally {
    agent.destroy();
    await stopService(service);
    await storage.drop();
  }
}

function report(samples: Sample[]) {
  // The first fifth is warm-up: caches, JIT and pools fill up.
  const settled = samples.filter((s) => s.minute >= MINUTES / 5);
  const rssSlope = slope(settled, (s) => s.rssMb);
  const heapSlope = slope(settled, (s) => s.heapMb);
  const fdSlope = slope(settled, (s) => s.openFiles);
  const first = settled[0] as Sample;
  const last = settled.at(-1) as Sample;
  console.log(
    `\nsoak: ${MINUTES} min, ${WORKERS} workers, ${counts.requests} requests ` +
      `(${(counts.requests / (MINUTES * 60)).toFixed(0)}/s), statuses ${JSON.stringify(Object.fromEntries([...counts.byStatus].sort()))}`,
  );
  console.log(
    `after warm-up: rss ${first.rssMb.toFixed(1)} -> ${last.rssMb.toFixed(1)} MB (trend ${rssSlope.toFixed(2)} MB/min), ` +
      `heap ${first.heapMb.toFixed(1)} -> ${last.heapMb.toFixed(1)} MB (trend ${heapSlope.toFixed(2)} MB/min), ` +
      `open files ${first.openFiles} -> ${last.openFiles} (trend ${fdSlope.toFixed(2)}/min), ` +
      `connections ${first.openConnections} -> ${last.openConnections}, database connections ${first.dbConnections} -> ${last.dbConnections}`,
  );
  const problems = [
    ...(counts.serverErrors > 0 ? [`${counts.serverErrors} answers 5xx`] : []),
    ...(counts.failures > 0 ? [`${counts.failures} requests without an answer`] : []),
    ...(heapSlope > GROWTH_LIMIT_MB_PER_MINUTE ? [`heap grows ${heapSlope.toFixed(2)} MB/min`] : []),
    ...(rssSlope > GROWTH_LIMIT_MB_PER_MINUTE * 2 ? [`rss grows ${rssSlope.toFixed(2)} MB/min`] : []),
    ...(fdSlope > 1 ? [`open files grow ${fdSlope.toFixed(2)}/min`] : []),
  ];
  console.log(problems.length === 0 ? 'verdict: no error, no growth trend' : `verdict: ${problems.join('; ')}`);
  if (problems.length > 0) process.exitCode = 1;
}

await main();
