import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PROJECT_ROOT } from './openapi-tools.js';

/** The sequences of docs/operations.md, each marked `<!-- runbook: name -->` before its fenced block, run as written. */
const OPERATIONS = join(PROJECT_ROOT, 'docs', 'operations.md');
const MARKED = /<!-- runbook: ([\w-]+) -->\n( *)```\w+\n([\s\S]*?)\n *```/g;

/** Every marked block by name, in the file's order, without the indentation of the list item it may stand in. */
function runbooks(): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const [, name, indent = '', text = ''] of readFileSync(OPERATIONS, 'utf8').matchAll(MARKED)) {
    blocks.set(
      name as string,
      text
        .split('\n')
        .map((line) => line.slice(indent.length))
        .join('\n'),
    );
  }
  return blocks;
}

export function runbook(name: string): string {
  const text = runbooks().get(name);
  if (text === undefined) throw new Error(`docs/operations.md has no runbook '${name}'`);
  return text;
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `npm ci` stood in for: it would reinstall the node_modules a test's checkout shares with the project. */
const NPM_CI_STOOD_IN =
  'npm() { if [ "$1" = ci ]; then echo "(npm ci: this checkout shares the project\'s node_modules)"; else command npm "$@"; fi; }';

/**
 * Runs `script` in bash as an operator's shell runs what is pasted into it: with none of the test's options (a block
 * fails by itself or not at all), in `cwd`, with the test's database settings left out of the environment.
 */
function runInShell(script: string, { cwd, env = {} }: { cwd: string; env?: Record<string, string> }): Promise<Ran> {
  if (!existsSync(cwd)) throw new Error(`no ${cwd}`);
  const { DATABASE_URL: _, REGISTRY_DATA_DIR: __, TEST_DATABASE: ___, ...inherited } = process.env;
  const child = spawn('bash', ['-c', script], {
    cwd,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The block `name` alone in `cwd` (the upgrade, in a checkout whose `npm ci` is stood in for). */
export function runRunbook(name: string, { cwd, env }: { cwd: string; env?: Record<string, string> }): Promise<Ran> {
  return runInShell(`${NPM_CI_STOOD_IN}\n${runbook(name)}`, { cwd, env });
}

const shellQuoted = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;

/** A settings block with the installation's values in place of the examples: each of `values` must be one of its variables. */
function withValues(text: string, values: Record<string, string>, unused: Set<string>): string {
  return text
    .split('\n')
    .map((line) => {
      const setting = /^(export )?([A-Z_]+)=(?:'[^']*'|\S+)(.*)$/.exec(line);
      const value = setting ? values[setting[2] as string] : undefined;
      if (!setting || value === undefined) return line;
      unused.delete(setting[2] as string);
      return `${setting[1] ?? ''}${setting[2]}=${shellQuoted(value)}${setting[3]}`;
    })
    .join('\n');
}

export interface RunbookSession {
  /** Runs the block after the settings; a block may run again, but never one the file gives before the last one run. */
  run(name: string, env?: Record<string, string>): Promise<Ran>;
}

/**
 * The shell of an operator who ran the `settings` blocks as written (with `values` in place of the examples, `home`
 * as $HOME), once, and then runs the file's sequences one after another in it, in the file's order.
 */
export async function runbookSession({
  settings,
  values,
  home,
}: {
  settings: string[];
  values: Record<string, string>;
  home: string;
}): Promise<RunbookSession> {
  const unused = new Set(Object.keys(values));
  const script = settings.map((name) => withValues(runbook(name), values, unused)).join('\n');
  if (unused.size > 0) throw new Error(`the settings of docs/operations.md set no ${[...unused].join(', ')}`);
  const variables = [...script.matchAll(/^(?:export )?([A-Z_]+)=/gm)].map((match) => match[1]);
  // What the shell holds after them: their variables (exported or not, as set) and the directory they went to.
  const set = await runInShell(`${script}\ndeclare -p ${variables.join(' ')}\nprintf 'cd %q\\n' "$PWD"`, {
    cwd: home,
    env: { HOME: home },
  });
  if (set.code !== 0) throw new Error(`the settings failed: ${set.stderr}`);
  const names = [...runbooks().keys()];
  let last = -1;
  return {
    run(name, env = {}) {
      const at = names.indexOf(name);
      if (at < last) throw new Error(`docs/operations.md gives '${name}' before '${names[last]}'`);
      last = at;
      return runInShell(`${set.stdout}\n${runbook(name)}`, { cwd: home, env: { ...env, HOME: home } });
    },
  };
}

/**
 * A checkout of the registry of its own, as the runbooks run in: its command line (`./registry`, `bin/`,
 * `package.json`), with the project's node_modules and build.
 */
export function checkoutCopy(dir: string): string {
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(PROJECT_ROOT, 'registry'), join(dir, 'registry'));
  copyFileSync(join(PROJECT_ROOT, 'package.json'), join(dir, 'package.json'));
  cpSync(join(PROJECT_ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  for (const shared of ['node_modules', 'dist']) symlinkSync(join(PROJECT_ROOT, shared), join(dir, shared));
  return dir;
}

/** The files of a checkout (the shared links not followed), apart from its data directory: what the runbooks must leave as it was. */
export function checkoutFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .filter((path) => path !== 'data' && !path.startsWith('data/'))
    .sort();
}
