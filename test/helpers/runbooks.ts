import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from './openapi-tools.js';

/** The sequences of docs/operations.md, each marked `<!-- runbook: name -->` before its fenced block, run as written. */
const OPERATIONS = join(PROJECT_ROOT, 'docs', 'operations.md');

/** The block marked `name`, without the indentation of the list item it may stand in. */
export function runbook(name: string): string {
  const match = new RegExp(`<!-- runbook: ${name} -->\\n( *)\`\`\`\\w+\\n([\\s\\S]*?)\\n *\`\`\``).exec(readFileSync(OPERATIONS, 'utf8'));
  if (!match) throw new Error(`docs/operations.md has no runbook '${name}'`);
  const indent = match[1]?.length ?? 0;
  return (match[2] as string).split('\n').map((line) => line.slice(indent)).join('\n');
}

/**
 * How the commands of a block reach the registry: `project` runs `npx registry` from the project's build (the
 * tests' way: their global set-up made it current); `checkout` runs it as a user does, in a checkout of its own with its own build, with `npm ci` stood in for
 * (it would reinstall the node_modules the checkout shares with the project).
 */
const PRELUDES = {
  project: `npx() { if [ "$1" = registry ]; then shift; "${process.execPath}" "${join(PROJECT_ROOT, 'dist', 'cli.js')}" "$@"; else command npx "$@"; fi; }`,
  checkout: 'npm() { if [ "$1" = ci ]; then echo "(npm ci: this checkout shares the project\'s node_modules)"; else command npm "$@"; fi; }',
};

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the block `name` in bash (`-euo pipefail`: the first failing command fails it) in `cwd`, with `env` added. */
export function runRunbook(name: string, { cwd, env = {}, registry = 'project' }: { cwd: string; env?: Record<string, string>; registry?: keyof typeof PRELUDES }): Promise<Ran> {
  if (!existsSync(cwd)) throw new Error(`no ${cwd}`);
  const { DATABASE_URL: _, REGISTRY_DATA_DIR: __, TEST_DATABASE: ___, ...inherited } = process.env;
  const child = spawn('bash', ['-euo', 'pipefail', '-c', `${PRELUDES[registry]}\n${runbook(name)}`], {
    cwd, env: { ...inherited, PATH: `${dirname(process.execPath)}:${process.env.PATH}`, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
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
