import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import { runCommand } from '../../src/command-line.js';
import { openPostgres } from '../../src/db/postgres.js';
import { TEST_DATABASE_URL } from './database.js';

/**
 * Runs the real entry points (`dist/server.js`, `dist/cli.js`, built from src/ by the suite's global set-up) as an
 * operator does, in a process of their own.
 */

const ROOT = join(import.meta.dirname, '..', '..');

function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', ...extra };
  for (const name of ['DATABASE_URL', 'REGISTRY_DEMO', 'REGISTRY_PASSWORD', 'REGISTRY_ADMIN_PASSWORD']) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

/** `root`: where the program's files are (a copy of the project's, for a start that lacks some of them). */
function launch(entry: string, args: string[], env: Record<string, string>, root = ROOT): ChildProcess {
  return spawn(process.execPath, [entry, ...args], {
    cwd: root,
    env: environment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `closeStdout`: the reader closes the pipe before reading anything, as `| head` does once it has enough. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  options: { closeStdout?: boolean } = {},
): Promise<Finished> {
  return runToEnd('dist/cli.js', args, env, options);
}

/**
 * A command of the command line run in this process (`runCommand`, which the process entry `dist/cli.js` runs on its
 * own streams), with the environment `runCli` gives the process: the same answer without a Node.js start, a module
 * load and, on the embedded database, a compile of PGlite's WebAssembly per command. `runCli` stays for what only a
 * process shows (its exit code as the shell sees it, a reader that closes the pipe, the launcher).
 */
export async function runCommandHere(args: string[], env: Record<string, string>): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  const collecting = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const code = await runCommand(args, {
    stdout: collecting((text) => (stdout += text)),
    stderr: collecting((text) => (stderr += text)),
    env: environment(env),
  });
  return { code, stdout, stderr };
}

/**
 * What a start that failed wrote: exit status 1 and one JSON log line (level 60) on standard error, with no stack
 * trace. Its fields, `msg` first among them.
 */
export function startFailure(finished: Finished): { msg: string; [field: string]: unknown } {
  expect(finished.code, `${finished.stdout}\n${finished.stderr}`).toBe(1);
  const lines = finished.stderr.trim().split('\n');
  expect(lines, finished.stderr).toHaveLength(1);
  const line = JSON.parse(lines[0] as string);
  expect(line).toMatchObject({ level: 60, msg: expect.any(String) });
  expect(finished.stderr).not.toMatch(/\bat .*\.(ts|js):\d+/);
  return line;
}

/** The server run for a start that must end by itself (a refused configuration); `root` as `launch` takes it. */
export function runServerToEnd(env: Record<string, string>, root?: string): Promise<Finished> {
  return runToEnd('dist/server.js', [], { PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', ...env }, { root });
}

/** A copy of the built program in `dir`, without the shipped `reference-data/`, for `runServerToEnd`. */
export async function programWithoutReferenceData(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await cp(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  await cp(join(ROOT, 'package.json'), join(dir, 'package.json'));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function runToEnd(
  entry: string,
  args: string[],
  env: Record<string, string>,
  options: { closeStdout?: boolean; root?: string } = {},
): Promise<Finished> {
  const child = launch(entry, args, env, options.root);
  if (options.closeStdout) child.stdout?.destroy();
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A command that hangs is ended, so that it fails its test instead of outliving it.
  const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RunningServer {
  baseUrl: string;
  pid: number;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves once the output matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then waits for the process to end. */
  stop(): Promise<number | null>;
}

export async function startServer(env: Record<string, string>): Promise<RunningServer> {
  const child = launch('dist/server.js', [], { PORT: '0', HOST: '127.0.0.1', MANAGEMENT_PORT: '0', ...env });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  exited.then(() => listeners.forEach((listener) => listener()));

  const waitFor = (pattern: RegExp, timeoutMs = 90_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = output.match(pattern);
        if (match) done(() => resolve(match));
        else if (child.exitCode !== null)
          done(() => reject(new Error(`server exited (${child.exitCode}) before printing ${pattern}:\n${output}`)));
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${output}`))),
        timeoutMs,
      );
      const done = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    });

  const [, address] = await waitFor(/registry listening on (http:\/\/[^"\s]+)/);
  return {
    baseUrl: address as string,
    pid: child.pid as number,
    output: () => output,
    waitFor,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A fresh schema on the test PostgreSQL, named in a DATABASE_URL, for entry points that read only that. */
export async function freshDatabaseUrl(): Promise<{ url: string; schema: string; drop(): Promise<void> }> {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const admin = openPostgres({ connectionString: TEST_DATABASE_URL, maxConnections: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public').catch(() => undefined);
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema},public`);
  return {
    url: url.toString(),
    schema,
    async drop() {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    },
  };
}
