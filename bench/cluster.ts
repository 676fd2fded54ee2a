/**
 * The benchmark's own PostgreSQL cluster: the machine's PostgreSQL binaries, `initdb` into a temporary directory,
 * a port of its own and memory sized for the data set, so that results do not depend on a shared server's
 * defaults. Durability stays as in production (fsync and synchronous_commit on).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Cluster {
  adminUrl: string;
  settings: Record<string, string>;
  version: string;
  stop(): void;
}

/** The newest PostgreSQL server binaries of the machine (Debian keeps them under /usr/lib/postgresql/<major>/bin). */
function serverBinaries(): { dir: string; version: string } {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const version = versions.find((v) => existsSync(join(root, v, 'bin/initdb')));
  if (!version) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql: install postgresql, or pass --database-url');
  return { dir: join(root, version, 'bin'), version };
}

/**
 * Settings for a data set of `participants`: shared_buffers large enough to hold the participant tables and their
 * indexes (about 2.5 kB per participant), the rest as the README's operations part recommends.
 */
export function clusterSettings(participants: number): Record<string, string> {
  const sharedMiB = Math.min(4096, Math.max(256, Math.ceil((participants * 2.5) / 1024)));
  return {
    shared_buffers: `${sharedMiB}MB`,
    effective_cache_size: `${Math.max(1024, sharedMiB * 3)}MB`,
    work_mem: '16MB',
    maintenance_work_mem: '512MB',
    max_connections: '200',
    random_page_cost: '1.1',
    effective_io_concurrency: '200',
    jit: 'off',
    max_wal_size: '4GB',
    checkpoint_timeout: '15min',
    wal_compression: 'on',
    max_parallel_workers_per_gather: '2',
    fsync: 'on',
    synchronous_commit: 'on',
  };
}

/** `command args` as the `postgres` user when running as root (PostgreSQL refuses to run as root). */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

function run(command: string, args: string[]): void {
  const [file, argv] = asServerUser(command, args);
  execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Creates and starts the cluster on `port`; `stop()` stops it and removes its directory (also on exit). */
export function startCluster(participants: number, port: number): Cluster {
  const { dir: bin, version } = serverBinaries();
  const dataDir = mkdtempSync(join(tmpdir(), 'registry-bench-pg-'));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    chownSync(dataDir, uid, gid);
  }
  const settings = clusterSettings(participants);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      run(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
    } catch {
      // Not started, or already gone: the directory is removed either way.
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.once('exit', stop);
  try {
    run(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8']);
    const options = [`-p ${port}`, `-k ${dataDir}`, "-c listen_addresses='127.0.0.1'",
      ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`)].join(' ');
    run(join(bin, 'pg_ctl'), ['-D', dataDir, '-o', options, '-l', join(dataDir, 'server.log'), '-w', 'start']);
  } catch (error) {
    stop();
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`could not start the benchmark's PostgreSQL cluster: ${stderr.slice(0, 1000)}`, { cause: error });
  }
  return { adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`, settings, version, stop };
}
