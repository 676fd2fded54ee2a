import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** This file's folder is src/status (run from the sources) or dist/status (the build): the project is two up. */
const PROJECT = join(import.meta.dirname, '..', '..');
/** What the build wrote beside the built code (scripts/build.mjs); there is none beside the sources. */
const BUILD_STAMP = join(import.meta.dirname, '..', 'build-stamp.json');

/** The version that runs, and what it was made from. */
export interface BuildInfo {
  version: string;
  /** The git commit of the build, or of the checkout the sources run from; null outside a git checkout. */
  commit: string | null;
  /** When the running build was made; null when the service runs from the sources (development, tests). */
  builtAt: string | null;
}

let known: BuildInfo | undefined;

/** Read once per process: what runs does not change while it runs. */
export function buildInfo(): BuildInfo {
  known ??= readBuildInfo();
  return known;
}

function readBuildInfo(): BuildInfo {
  try {
    const stamp = JSON.parse(readFileSync(BUILD_STAMP, 'utf8')) as BuildInfo;
    return { version: stamp.version, commit: stamp.commit ?? null, builtAt: stamp.builtAt ?? null };
  } catch {
    const { version } = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')) as { version: string };
    return { version, commit: checkedOutCommit(), builtAt: null };
  }
}

function checkedOutCommit(): string | null {
  try {
    return (
      execFileSync('git', ['rev-parse', 'HEAD'], { cwd: PROJECT, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 })
        .toString()
        .trim() || null
    );
  } catch {
    return null;
  }
}
