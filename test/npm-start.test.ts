import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratedDataDirectory, testDatabaseKind } from './helpers/database.js';
import { PROJECT_ROOT } from './helpers/openapi-tools.js';
import { runRunbook } from './helpers/runbooks.js';

/**
 * `npm start` as a user runs it, in a git checkout of the project of its own (its node_modules shared): the first
 * start builds; a start on the unchanged checkout does not build again; after a `git pull` that changes a source, it
 * builds first. SIGTERM (or Ctrl-C) to `npm start` stops the service, exit status 0.
 */
const SLOW = 300_000;
let checkout: string;
let upstream: string;

const git = (cwd: string, ...args: string[]) => {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
};

/** The project's environment without the test run's database, so that the service takes the embedded one. */
function environment(dataDir: string): NodeJS.ProcessEnv {
  const { DATABASE_URL: _, TEST_DATABASE: __, ...inherited } = process.env;
  return {
    ...inherited,
    REGISTRY_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    MANAGEMENT_PORT: '0',
    REGISTRY_ADMIN_PASSWORD: 'npm-start-admin-password',
  };
}

interface Started {
  output: () => string;
  stop(): Promise<number | null>;
}

/** `npm start` until the service listens. */
async function npmStart(dataDir: string): Promise<Started> {
  const child = spawn('npm', ['start'], {
    cwd: checkout,
    env: environment(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + SLOW;
  while (!/registry listening on/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const stamp = () =>
  JSON.parse(readFileSync(join(checkout, 'dist', 'build-stamp.json'), 'utf8')) as { commit: string; builtAt: string };

describe.runIf(testDatabaseKind === 'embedded')('npm start', () => {
  beforeAll(() => {
    upstream = mkdtempSync(join(tmpdir(), 'registry-upstream-'));
    for (const path of [
      'src',
      'web',
      'scripts',
      'bin',
      'registry',
      'reference-data',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      '.gitignore',
    ]) {
      cpSync(join(PROJECT_ROOT, path), join(upstream, path), {
        recursive: true,
        filter: (source) => !source.endsWith('schema.d.ts'),
      });
    }
    git(upstream, 'init', '-q', '-b', 'main');
    git(
      upstream,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.org',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'empty',
    );
    git(upstream, 'add', '-A');
    git(upstream, '-c', 'user.name=t', '-c', 'user.email=t@example.org', 'commit', '-q', '-m', 'the registry');
    checkout = mkdtempSync(join(tmpdir(), 'registry-checkout-'));
    git(checkout, 'clone', '-q', upstream, '.');
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(checkout, 'node_modules'));
  });
  afterAll(() => {
    for (const dir of [checkout, upstream]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'builds on the first start, starts an unchanged checkout without building, and builds again after a git pull',
    async () => {
      // Made migrated: the builds are this test's concern, the first start on nothing is first-start.test.ts's.
      const dataDir = await migratedDataDirectory(join(checkout, 'data'));
      const first = await npmStart(dataDir);
      expect(first.output()).toContain('building: no build yet');
      expect(await first.stop()).toBe(0);
      const built = stamp();
      expect(built.commit).toBe(git(checkout, 'rev-parse', 'HEAD'));
      const serverBuilt = statSync(join(checkout, 'dist', 'server.js')).mtimeMs;

      // An unchanged checkout: touched files (a checkout, a copy) are no change; only their bytes count.
      const now = new Date();
      spawnSync('touch', ['-d', now.toISOString(), join(checkout, 'src', 'config.ts')]);
      const again = await npmStart(dataDir);
      expect(again.output()).toMatch(/the build is current \(built \S+ from these sources\): not building again/);
      expect(again.output()).not.toContain('building:');
      expect(await again.stop()).toBe(0);
      expect(stamp()).toEqual(built);
      expect(statSync(join(checkout, 'dist', 'server.js')).mtimeMs).toBe(serverBuilt);

      // Upstream changes a source; the checkout pulls it.
      const config = join(upstream, 'src', 'config.ts');
      writeFileSync(config, `${readFileSync(config, 'utf8')}\n// a change pulled from upstream\n`);
      git(upstream, '-c', 'user.name=t', '-c', 'user.email=t@example.org', 'commit', '-q', '-am', 'a change');
      git(checkout, 'pull', '-q', '--ff-only');
      const check = spawnSync(process.execPath, ['scripts/build.mjs', '--check'], { cwd: checkout, encoding: 'utf8' });
      expect([check.status, check.stdout.trim()]).toEqual([
        1,
        `the build is not current: the sources changed since the build of ${built.builtAt}`,
      ]);
      const pulled = await npmStart(dataDir);
      expect(pulled.output()).toContain('building: the sources changed since the build of');
      expect(await pulled.stop()).toBe(0);
      expect(stamp().commit).toBe(git(checkout, 'rev-parse', 'HEAD'));
      expect(stamp().commit).not.toBe(built.commit);
    },
    SLOW,
  );

  it(
    'upgrades as docs/operations.md says (a release with a migration), then starts the fastest way: node dist/server.js',
    async () => {
      const dataDir = join(checkout, 'data');
      writeFileSync(
        join(upstream, 'src', 'db', 'migrations', '999_upgrade_probe.sql'),
        'CREATE TABLE upgrade_probe (seen boolean);\n',
      );
      git(upstream, 'add', '-A');
      git(
        upstream,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@example.org',
        'commit',
        '-q',
        '-m',
        'a release with a migration',
      );
      const upgraded = await runRunbook('upgrade', {
        cwd: checkout,
        env: environment(dataDir) as Record<string, string>,
      });
      expect(upgraded.code, `${upgraded.stdout}\n${upgraded.stderr}`).toBe(0);
      expect(upgraded.stdout).toContain('Applied 1 migration: 999_upgrade_probe.sql.');
      expect(stamp().commit).toBe(git(upstream, 'rev-parse', 'HEAD'));

      const server = spawn(join(checkout, 'node_modules', '.bin', 'node'), ['dist/server.js'], {
        cwd: checkout,
        env: environment(dataDir),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
      await expect.poll(() => output, { timeout: 60_000 }).toMatch(/registry listening on/);
      server.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
    SLOW,
  );
});
