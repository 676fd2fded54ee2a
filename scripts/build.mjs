// The build (`npm run build`) and the check before every `npm start` (`--if-changed`): a build is current while the
// sources it was made from are unchanged, byte for byte, so an unchanged checkout starts at once and any change (an
// edit, a `git pull`, a new package-lock.json) builds again first.
//
//   node scripts/build.mjs               build, then write dist/build-stamp.json
//   node scripts/build.mjs --if-changed  build only when the stamp does not match the sources (npm start)
//   node scripts/build.mjs --check       say whether the build is current; exit 0 when it is, 1 when not
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import console from 'node:console';
import process from 'node:process';

const ROOT = join(import.meta.dirname, '..');
const STAMP = join(ROOT, 'dist', 'build-stamp.json');
/** What the build reads. */
const INPUTS = [
  'src',
  'web',
  'scripts/build.mjs',
  'scripts/copy-assets.mjs',
  'scripts/web-api-types.ts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];
/** Made by the build itself (the console's API types): an output, not a source. */
const GENERATED = new Set(['web/src/api/schema.d.ts']);
/** What a start needs of the build. */
const OUTPUTS = ['dist/server.js', 'dist/cli.js', 'dist/console/index.html'];
/** tsc's record of what it compiled (tsconfig.build.json: incremental): a build after a change compiles what it touched. */
const TS_BUILD_INFO = join(ROOT, 'dist', 'tsconfig.build.tsbuildinfo');

function filesOf(path) {
  if (!existsSync(join(ROOT, path))) return [];
  if (!statSync(join(ROOT, path)).isDirectory()) return [path];
  return readdirSync(join(ROOT, path), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(ROOT.length + 1));
}

/** A hash of every input file's path and bytes. */
function sourceHash() {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap(filesOf)
    .filter((file) => !GENERATED.has(file))
    .sort()) {
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(ROOT, file)))
      .update('\0');
  }
  return hash.digest('hex');
}

/** The commit checked out, when this is a git checkout; null otherwise (an unpacked release). */
function commit() {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Why the build is not current; undefined when it is. */
function staleness(hash) {
  const stamp = readStamp();
  if (!stamp) return 'no build yet (or the last one did not finish)';
  if (stamp.sourceHash !== hash) return `the sources changed since the build of ${stamp.builtAt}`;
  const missing = OUTPUTS.find((output) => !existsSync(join(ROOT, output)));
  return missing ? `${missing} is missing` : undefined;
}

function run(command, args) {
  const bin = join(ROOT, 'node_modules', '.bin');
  const result = spawnSync(command, args, {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}` },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function build(hash) {
  // tsc takes its record's word that the outputs it lists are there: kept only from a build that finished and whose
  // outputs are all there, else the compile starts afresh.
  const lastBuildWhole = readStamp() !== undefined && OUTPUTS.every((output) => existsSync(join(ROOT, output)));
  if (!lastBuildWhole) rmSync(TS_BUILD_INFO, { force: true });
  // Gone until the build has finished: a build that fails half-way is never taken for current.
  rmSync(STAMP, { force: true });
  run('tsc', ['-p', 'tsconfig.build.json']);
  run(process.execPath, ['scripts/copy-assets.mjs']);
  run('npm', ['run', 'build:web']);
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  writeFileSync(
    STAMP,
    `${JSON.stringify({ version, commit: commit(), sourceHash: hash, builtAt: new Date().toISOString() }, null, 2)}\n`,
  );
}

const mode = process.argv[2];
if (mode !== undefined && mode !== '--if-changed' && mode !== '--check') {
  console.error('usage: node scripts/build.mjs [--if-changed | --check]');
  process.exit(2);
}
const hash = sourceHash();
const stale = mode === undefined ? 'asked to build' : staleness(hash);
if (mode === '--check') {
  console.log(stale ? `the build is not current: ${stale}` : 'the build is current');
  process.exit(stale ? 1 : 0);
}
if (stale) {
  if (mode) console.log(`building: ${stale}`);
  build(hash);
} else {
  console.log(`the build is current (built ${readStamp().builtAt} from these sources): not building again`);
}
