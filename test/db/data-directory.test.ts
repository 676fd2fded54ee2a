import { chmod, lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratedDataDirectory, testDatabaseKind } from '../helpers/database.js';
import { runCommandHere, startServer } from '../helpers/entry-point.js';

const SLOW = 180_000;

/** Every entry under `dir` (itself included) whose mode lets anyone but its owner in, as `path mode`. */
async function widerThanOwner(dir: string): Promise<string[]> {
  const wide: string[] = [];
  const visit = async (path: string) => {
    const stats = await lstat(path);
    if ((stats.mode & 0o077) !== 0) wide.push(`${path} ${(stats.mode & 0o777).toString(8)}`);
    if (stats.isDirectory()) for (const name of await readdir(path)) await visit(join(path, name));
  };
  await visit(dir);
  return wide;
}

describe.runIf(testDatabaseKind === 'embedded')('the embedded data directory', () => {
  let parent: string;
  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), 'registry-data-dir-'));
  });
  afterAll(() => rm(parent, { recursive: true, force: true }));

  it(
    "is its owner's only, and so is every file the database writes in it, during a run and after",
    async () => {
      const dataDir = join(parent, 'fresh');
      const server = await startServer({ REGISTRY_DATA_DIR: dataDir });
      try {
        await server.waitFor(/first start: /);
        expect(await widerThanOwner(dataDir)).toEqual([]);
      } finally {
        expect(await server.stop()).toBe(0);
      }
      expect(await widerThanOwner(dataDir)).toEqual([]);
    },
    SLOW,
  );

  it(
    "is made its owner's only when it exists already with wider modes",
    async () => {
      // A database made earlier (the migrated one), then opened up as an older version of the registry left it.
      const dataDir = await migratedDataDirectory(join(parent, 'existing'));
      await chmod(dataDir, 0o755);
      await writeFile(join(dataDir, 'left-by-an-older-version'), 'x', { mode: 0o666 });
      await chmod(join(dataDir, 'left-by-an-older-version'), 0o666);
      expect(await widerThanOwner(dataDir)).not.toEqual([]);

      const result = await runCommandHere(['create-admin', 'second-admin'], {
        REGISTRY_DATA_DIR: dataDir,
        REGISTRY_PASSWORD: 'a-long-enough-password',
      });
      expect(result.code, result.stderr).toBe(0);
      expect(await widerThanOwner(dataDir)).toEqual([]);
    },
    SLOW,
  );
});
