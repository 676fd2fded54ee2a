import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { percentile, type Measurement } from './measure.js';

const run = promisify(execFile);

/** pgbench from PATH, else the newest PostgreSQL's own. */
export function pgbenchPath(): string {
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (existsSync(join(dir, 'pgbench'))) return join(dir, 'pgbench');
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions)
    if (existsSync(join(root, version, 'bin/pgbench'))) return join(root, version, 'bin/pgbench');
  throw new Error('pgbench not found: install the PostgreSQL client (Debian: postgresql-client)');
}

export interface PgbenchRun {
  databaseUrl: string;
  script: string;
  clients: number;
  /** Seconds, or a fixed number of transactions per client when `transactions` is set. */
  duration: number;
  transactions?: number;
  /** How the service sends this SQL: prepared statements (queries with parameters), else the extended protocol. */
  mode: 'prepared' | 'extended';
}

/**
 * Runs one pgbench script in the protocol the service uses for it and reads every transaction's latency
 * from pgbench's per-transaction log.
 */
export async function pgbench(options: PgbenchRun): Promise<Measurement> {
  const dir = mkdtempSync(join(tmpdir(), 'registry-pgbench-'));
  try {
    const scriptFile = join(dir, 'script.sql');
    writeFileSync(scriptFile, options.script);
    const limit = options.transactions ? ['-t', String(options.transactions)] : ['-T', String(options.duration)];
    const { stdout } = await run(
      pgbenchPath(),
      [
        '-n',
        '-M',
        options.mode,
        '-c',
        String(options.clients),
        '-j',
        String(Math.min(options.clients, 2)),
        ...limit,
        '-f',
        scriptFile,
        '-l',
        '--log-prefix',
        join(dir, 'log'),
        options.databaseUrl,
      ],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const failed = /number of failed transactions: (\d+)/.exec(stdout);
    const latenciesMs = readdirSync(dir)
      .filter((name) => name.startsWith('log'))
      .flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n'))
      .filter((line) => line !== '')
      .map((line) => Number(line.split(' ')[2]) / 1000)
      .sort((a, b) => a - b);
    const tps = Number(/tps = ([\d.]+)/.exec(stdout)?.[1] ?? Number.NaN);
    return {
      perSecond: tps,
      p50: percentile(latenciesMs, 50),
      p99: percentile(latenciesMs, 99),
      errors: Number(failed?.[1] ?? 0),
      count: latenciesMs.length,
    };
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`pgbench failed: ${String(stderr ?? '').slice(0, 2000)} ${String(stdout ?? '').slice(-500)}`, {
      cause: error,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
