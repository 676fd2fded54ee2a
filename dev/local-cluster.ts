/**
 * A PostgreSQL primary and its streaming hot standbys from the machine's server binaries (Debian keeps them under
 * /usr/lib/postgresql/<major>/bin), each in a temporary directory on a port of its own: what the standby tests and the
 * benchmark start, and what a developer tries a deployment with standbys on:
 *
 *   npx tsx dev/local-cluster.ts [standbys] [--synchronous]
 *
 * prints the multi-host DATABASE_URL a failover needs and DATABASE_READ_URLS, with the commands of a failover drill;
 * the standbys are named standby_1, standby_2, ... (`cluster_name`, the name `synchronous_standby_names` matches), and
 * `--synchronous` makes every commit wait for one of them, set once they all stream. Ctrl-C (or SIGTERM, SIGHUP) stops
 * and removes everything.
 *
 * PostgreSQL refuses to run as root: as root, every server command runs as the `postgres` user.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';

/** The newest PostgreSQL server binaries of the machine. */
export function serverBinaries(): { dir: string; version: string } {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const version = versions.find((v) => existsSync(join(root, v, 'bin/initdb')));
  if (!version)
    throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql: install the Debian package postgresql');
  return { dir: join(root, version, 'bin'), version };
}

/** `command args` as the `postgres` user when running as root. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

function failed(command: string, error: unknown): Error {
  const stderr = (error as { stderr?: Buffer | string }).stderr?.toString() ?? '';
  return new Error(`${command} failed: ${stderr.slice(0, 1000)}`, { cause: error });
}

function run(command: string, args: string[]): void {
  const [file, argv] = asServerUser(join(serverBinaries().dir, command), args);
  try {
    execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    throw failed(command, error);
  }
}

/** `run` without blocking the event loop. */
async function runInBackground(command: string, args: string[]): Promise<void> {
  const [file, argv] = asServerUser(join(serverBinaries().dir, command), args);
  await promisify(execFile)(file, argv).catch((error: unknown) => {
    throw failed(command, error);
  });
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
    const server = createServer()
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      })
      .on('error', reject);
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
  /**
   * `stop` without blocking the event loop: what a signal handler under tsx uses, whose parent kills a child that does
   * not answer its relayed signal at once.
   */
  stopInBackground(): Promise<void>;
}

export interface ServerOptions {
  /** `-c name=value` settings of the server (a standby gets its primary's, which it must match or exceed). */
  settings?: Record<string, string>;
  /** The standby's name at its primary (`cluster_name`: its walreceiver's application_name). */
  name?: string;
  /** false: no fsync of the cluster's files at initdb (tests, whose clusters end with them). */
  durable?: boolean;
}

function startServer(dataDir: string, port: number, settings: Record<string, string>): LocalServer {
  const options = [
    `-p ${port}`,
    `-k ${dataDir}`,
    "-c listen_addresses='127.0.0.1'",
    ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`),
  ].join(' ');
  let stopped = false;
  const claim = () => {
    if (stopped) return false;
    stopped = true;
    process.off('exit', stop);
    return true;
  };
  const stopArgs = ['-D', dataDir, '-m', 'fast', '-w', 'stop'];
  // Not started, killed, or already gone: the directory is removed either way.
  const stop = () => {
    if (!claim()) return;
    try {
      run('pg_ctl', stopArgs);
    } catch {
      // See above.
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const stopInBackground = async () => {
    if (!claim()) return;
    await runInBackground('pg_ctl', stopArgs).catch(() => undefined);
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
    stopInBackground,
  };
}

/** A new cluster (`initdb`) started as a primary; its default settings already allow streaming standbys. */
export async function startPrimary(options: ServerOptions = {}): Promise<LocalServer> {
  const dataDir = serverDirectory('registry-pg-primary-');
  try {
    run('initdb', [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C.UTF-8',
      ...(options.durable === false ? ['--no-sync'] : []),
    ]);
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
    run('pg_basebackup', [
      '-D',
      dataDir,
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      ...(options.durable === false ? ['--no-sync'] : []),
    ]);
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const name: Record<string, string> = options.name === undefined ? {} : { cluster_name: options.name };
  return startServer(dataDir, await freePort(), { ...options.settings, ...name, hot_standby_feedback: 'on' });
}

/** The database the printed connection strings name. */
const DATABASE = 'registry';

async function sql(server: LocalServer, statement: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: server.url() });
  await client.connect();
  try {
    return (await client.query(statement)).rows;
  } finally {
    await client.end();
  }
}

/** Waits until `count` standbys stream with the given sync_state (a reload reaches the walsenders one by one). */
async function untilStandbys(primary: LocalServer, count: number, condition: string): Promise<void> {
  const statement = `SELECT count(*) AS n FROM pg_stat_replication WHERE state = 'streaming' AND ${condition}`;
  for (let waited = 0; Number((await sql(primary, statement))[0]?.n) < count; waited += 100) {
    if (waited > 60_000) throw new Error(`the standbys did not reach ${condition} within a minute`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Every commit waits for one of `names`: set only once they stream, else the primary's every commit would wait; the
 * settings are printed only once every standby counts for the quorum.
 */
async function makeSynchronous(primary: LocalServer, names: string[]): Promise<void> {
  await untilStandbys(primary, names.length, 'true');
  await sql(primary, `ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 (${names.join(', ')})'`);
  await sql(primary, 'SELECT pg_reload_conf()');
  await untilStandbys(primary, names.length, "sync_state = 'quorum'");
}

/** Stops every server once, on the first of Ctrl-C, SIGTERM or SIGHUP (a terminal's Ctrl-C may be heard twice: by npx and here). */
function stopOnSignals(servers: LocalServer[]): void {
  let stopping = false;
  const stopAll = () => {
    if (stopping) return;
    stopping = true;
    void Promise.all(servers.map((server) => server.stopInBackground())).then(() => process.exit(0));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stopAll);
}

async function main(standbyCount: number, synchronous: boolean): Promise<void> {
  const servers: LocalServer[] = [];
  stopOnSignals(servers);
  const primary = await startPrimary();
  servers.push(primary);
  await sql(primary, `CREATE DATABASE ${DATABASE}`);
  const standbys: LocalServer[] = [];
  for (let i = 1; i <= standbyCount; i += 1) {
    const standby = await startStandby(primary, { name: `standby_${i}` });
    servers.push(standby);
    standbys.push(standby);
  }
  if (synchronous && standbys.length > 0)
    await makeSynchronous(
      primary,
      standbys.map((_, i) => `standby_${i + 1}`),
    );
  const hosts = servers.map((server) => `127.0.0.1:${server.port}`).join(',');
  const bin = serverBinaries();
  console.log(
    `primary (PostgreSQL ${bin.version}) in ${primary.dataDir}${standbys.map((s, i) => `, standby_${i + 1} in ${s.dataDir}`).join('')}`,
  );
  console.log(`DATABASE_URL=postgres://postgres@${hosts}/${DATABASE}?target_session_attrs=read-write`);
  console.log(`DATABASE_READ_URLS=${standbys.map((s) => s.url(DATABASE)).join(',')}`);
  if (synchronous)
    console.log(
      `synchronous_standby_names = 'ANY 1 (${standbys.map((_, i) => `standby_${i + 1}`).join(', ')})' on the primary`,
    );
  console.log(`Lose the primary: kill -KILL $(head -1 ${join(primary.dataDir, 'postmaster.pid')})`);
  if (standbys[0])
    console.log(
      `Promote standby_1: ${asServerUser(join(bin.dir, 'pg_ctl'), ['-D', standbys[0].dataDir, '-w', 'promote']).flat().join(' ')}`,
    );
  console.log('Ctrl-C stops and removes them.');
  setInterval(() => undefined, 60_000);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  await main(Number(args.find((arg) => !arg.startsWith('--')) ?? 1), args.includes('--synchronous'));
}
