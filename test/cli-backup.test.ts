import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKind } from './helpers/database.js';
import { freshDatabaseUrl, runCommandHere, type Finished } from './helpers/entry-point.js';

/** `registry backup`, `restore` and `migrate`: what they refuse, each with one line and exit status 1 (run in this process: test/cli.test.ts runs the process). */
const SLOW = 120_000;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'registry-backup-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** One line that says what is wrong, after the line naming the database when the command had got as far as opening it. */
function refused(finished: Finished, message: string | RegExp): void {
  expect(finished.code, finished.stderr).toBe(1);
  const lines = finished.stderr.trim().split('\n');
  expect(lines.at(-1)).toMatch(message);
  expect(lines.slice(0, -1)).toEqual(
    lines.length > 1 ? [expect.stringMatching(/^Using (PostgreSQL at|the embedded database in) /)] : [],
  );
}

describe.runIf(testDatabaseKind === 'embedded')('backup and restore of the embedded database', () => {
  it(
    'refuses to overwrite a file, to restore into a directory that is not empty, and a file that is no backup',
    async () => {
      const data = { REGISTRY_DATA_DIR: join(dir, 'data') };
      expect((await runCommandHere(['migrate'], data)).stdout).toMatch(/^Applied \d+ migrations: 001_registry\.sql, /m);
      expect((await runCommandHere(['migrate'], data)).stdout).toMatch(
        /^Nothing to apply: the database has every migration of this version \(the last: \d{3}_\w+\.sql\)\.$/m,
      );
      const file = join(dir, 'registry.backup');
      expect((await runCommandHere(['backup', file], data)).code).toBe(0);
      // Names relative to the data directory: no tar writes them from the file system's root.
      const names = spawnSync('tar', ['-tzf', file], { encoding: 'utf8' });
      expect(names.stderr).toBe('');
      expect(names.stdout).toMatch(/^PG_VERSION$/m);
      expect(names.stdout.split('\n').filter((name) => name.startsWith('/'))).toEqual([]);
      refused(await runCommandHere(['backup', file], data), `${file} exists already; name a new file.`);

      refused(
        await runCommandHere(['restore', file], data),
        /^REGISTRY_DATA_DIR \S+\/data is not empty: restore into a new directory, or move this one away first\.$/,
      );
      const notABackup = join(dir, 'notes.txt');
      await writeFile(notABackup, 'not a backup');
      const empty = join(dir, 'empty');
      await mkdir(empty);
      refused(
        await runCommandHere(['restore', notABackup], { REGISTRY_DATA_DIR: empty }),
        /^not a backup of the embedded database \(.+\)$/,
      );
      // Nothing is left of the attempt: the directory is as empty as it was, and takes a real backup.
      expect(await readdir(empty)).toEqual([]);
      expect((await runCommandHere(['restore', file], { REGISTRY_DATA_DIR: empty })).code).toBe(0);
      expect(await readdir(empty)).not.toContain('registry.lock');
    },
    SLOW,
  );
});

describe.runIf(testDatabaseKind === 'postgres')('backup and restore on PostgreSQL', () => {
  it(
    'points to pg_dump and pg_restore, before opening the database',
    async () => {
      const database = await freshDatabaseUrl();
      try {
        const onPostgres =
          /^(backup|restore) is for the embedded database, and DATABASE_URL is set\. On PostgreSQL, use pg_dump and pg_restore: see docs\/operations\.md, "Backup and restore"\.$/;
        refused(await runCommandHere(['backup', join(dir, 'x.backup')], { DATABASE_URL: database.url }), onPostgres);
        refused(await runCommandHere(['restore', join(dir, 'x.backup')], { DATABASE_URL: database.url }), onPostgres);
        expect((await runCommandHere(['migrate'], { DATABASE_URL: database.url })).stdout).toMatch(
          /^Applied \d+ migrations: 001_registry\.sql, /m,
        );
      } finally {
        await database.drop();
      }
    },
    SLOW,
  );
});
