import { execFileSync } from 'node:child_process';
import { runtimeProblem } from '../scripts/check-runtime.mjs';

const INSTALL_SCRIPT = new URL('../scripts/install-system-packages.sh', import.meta.url).pathname;

/**
 * Runs once before any test: a suite on the wrong runtime or without its system packages stops here with
 * what to do, instead of failing halfway through.
 */
export default function checkPrerequisites(): void {
  const runtime = runtimeProblem();
  if (runtime) throw new Error(runtime);
  try {
    execFileSync('bash', [INSTALL_SCRIPT, '--check'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const missing = String((error as { stderr?: Buffer }).stderr ?? '').trim();
    throw new Error(`${missing}\nInstall them with: scripts/install-system-packages.sh (apt-get; as root or through sudo), then run the tests again.`);
  }
}
