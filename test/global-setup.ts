import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { runtimeProblem } from '../scripts/check-runtime.mjs';
import { prepareEmbeddedTemplate } from './helpers/database.js';
import { prepareTestUserHashes, useTestHashCost } from './helpers/test-users.js';

const INSTALL_SCRIPT = new URL('../scripts/install-system-packages.sh', import.meta.url).pathname;
const BUILD_SCRIPT = new URL('../scripts/build.mjs', import.meta.url).pathname;

/**
 * Runs once before any test: a suite on the wrong runtime or without its system packages stops here with
 * what to do, instead of failing halfway through. Then the build is made current, as `npm start` makes it: the
 * tests run the entry points and the console from dist/ as an operator does, each process without compiling
 * TypeScript again. Last, the migrated embedded database each test file's copy is loaded from, and the test users'
 * password hashes (at the suite's cheaper cost).
 */
export default function prepare(): Promise<void> {
  // Vitest runs the set-up for the root and again for each project (they extend it), all in this one process and
  // before any test: once is enough.
  const once = globalThis as { [PREPARED]?: Promise<void> };
  return (once[PREPARED] ??= prepareOnce());
}

const PREPARED = Symbol.for('registry-tests-prepared');

async function prepareOnce(): Promise<void> {
  const runtime = runtimeProblem();
  if (runtime) throw new Error(runtime);
  try {
    execFileSync('bash', [INSTALL_SCRIPT, '--check'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const missing = String((error as { stderr?: Buffer }).stderr ?? '').trim();
    throw new Error(
      `${missing}\nInstall them with: scripts/install-system-packages.sh (apt-get; as root or through sudo), then run the tests again.`,
    );
  }
  execFileSync(process.execPath, [BUILD_SCRIPT, '--if-changed'], { stdio: ['ignore', 'ignore', 'inherit'] });
  await mkdir(new URL('../test-output', import.meta.url), { recursive: true });
  useTestHashCost();
  await Promise.all([prepareEmbeddedTemplate(), prepareTestUserHashes()]);
}
