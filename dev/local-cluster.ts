/**
 * A PostgreSQL primary and its streaming hot standbys from the machine's server binaries (Debian keeps them under
 * /usr/lib/postgresql/<major>/bin), each in a temporary directory on a port of its own: what the standby tests and the
 * benchmark start, and what a developer tries a deployment with standbys on:
 *
 *   npx tsx dev/local-cluster.ts [standbys]     # prints DATABASE_URL and DATABASE_READ_URLS; Ctrl-C stops and removes it
 *
 * PostgreSQL refuses to run as root: as root, every server command runs as the `postgres` user.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The newest PostgreSQL server binaries of the machine. */
export function serverBinaries(): { dir: string; version: string } {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const version = versions.find((v) => existsSync(join(root, v, 'bin/initdb')));
  if (!version) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql: install the Debian package postgresql');
  return { dir: join(root, version, 'bin'), version };
}

/** `command args` as the `postgres` user when running as root. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

function run(command: string, args: string[]): void {
  const [file, argv] = asServerUser(join(serverBinaries().dir, command), args);
  try {
    execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`${command} failed: ${stderr.slice(0, 1000)}`, { cause: error });
  }
}

/** An empty directory for a server's files, its owner the server's user. */
function serverDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString());
    chownSync(dir, id('-u'), id('-g'));
  }
  return dir;
}

/** A port the system has just handed out as free. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    }).on('error', reject);
  });
}

/** One running server of the cluster (trust authentication on 127.0.0.1, superuser `postgres`). */
export interface LocalServer {
  port: number;
  dataDir: string;
  /** The connection string of `database` on this server. */
  url(database?: string): string;
  /** Kills the postmaster with SIGKILL, as a crash would: its backends end once they notice. */
  kill(): void;
  /** Makes a standby the primary (`pg_ctl promote`), waiting until it accepts writes. */
  promote(): void;
  /** Stops the server (if it still runs) and removes its directory; safe to call again. */
  stop(): void;
}

export interface ServerOptions {
  /** `-c name=value` settings of the server (a standby gets its primary's, which it must match or exceed). */
  settings?: Record<string, string>;
  /** false: no fsync of the cluster's files at initdb (tests, whose clusters end with them). */
  durable?: boolean;
}

function startServer(dataDir: string, port: number, settings: Record<string, string>): LocalServer {
  const options = [`-p ${port}`, `-k ${dataDir}`, "-c listen_addresses='127.0.0.1'",
    ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`)].join(' ');
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stop);
    try {
      run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
    } catch {
      // Not started, killed, or already gone: the directory is removed either way.
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.once('exit', stop);
  try {
    run('pg_ctl', ['-D', dataDir, '-o', options, '-l', join(dataDir, 'server.log'), '-w', 'start']);
  } catch (error) {
    stop();
    throw error;
  }
  return {
    port,
    dataDir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    kill() {
      const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGKILL');
    },
    promote: () => run('pg_ctl', ['-D', dataDir, '-w', 'promote']),
    stop,
  };
}

/** A new cluster (`initdb`) started as a primary; its default settings already allow streaming standbys. */
export async function startPrimary(options: ServerOptions = {}): Promise<LocalServer> {
  const dataDir = serverDirectory('registry-pg-primary-');
  try {
    run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8',
      ...(options.durable === false ? ['--no-sync'] : [])]);
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return startServer(dataDir, await freePort(), options.settings ?? {});
}

/**
 * A streaming hot standby of `primary`: a base backup (`pg_basebackup -R`, which writes the standby's connection to
 * its primary) started with `hot_standby_feedback` on, so that the primary keeps the rows its long reads still see.
 */
export async function startStandby(primary: LocalServer, options: ServerOptions = {}): Promise<LocalServer> {
  const dataDir = serverDirectory('registry-pg-standby-');
  try {
    run('pg_basebackup', ['-D', dataDir, '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-R', '-X', 'stream', '-c', 'fast',
      ...(options.durable === false ? ['--no-sync'] : [])]);
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return startServer(dataDir, await freePort(), { ...options.settings, hot_standby_feedback: 'on' });
}

async function main(standbyCount: number): Promise<void> {
  const primary = await startPrimary();
  const standbys: LocalServer[] = [];
  const stopAll = () => [...standbys, primary].forEach((server) => server.stop());
  process.once('SIGINT', () => {
    stopAll();
    process.exit(0);
  });
  for (let i = 0; i < standbyCount; i += 1) standbys.push(await startStandby(primary));
  console.log(`primary (${serverBinaries().version}) in ${primary.dataDir}, standbys in ${standbys.map((s) => s.dataDir).join(', ')}`);
  console.log(`DATABASE_URL=${primary.url()}`);
  console.log(`DATABASE_READ_URLS=${standbys.map((s) => s.url()).join(',')}`);
  console.log('Ctrl-C stops and removes them.');
  setInterval(() => undefined, 60_000);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(Number(process.argv[2] ?? 1));
