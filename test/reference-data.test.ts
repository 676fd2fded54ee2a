import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REFERENCE_DATA } from './helpers/code-lists.js';

/** The team's reference copy; a clone on its own does not have it, and then there is nothing to compare. */
const SHARED_DATA = join(REFERENCE_DATA, '..', '..', 'shared', 'data');

describe.skipIf(!existsSync(SHARED_DATA))('the project copy of the reference data', () => {
  it('is byte-identical to the reference copy, file for file (their READMEs apart)', () => {
    const files = (root: string) => readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name !== 'README.md')
      .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
      .sort();
    const shared = files(SHARED_DATA);
    expect(files(REFERENCE_DATA)).toEqual(shared);
    for (const file of shared) {
      expect(readFileSync(join(REFERENCE_DATA, file)).equals(readFileSync(join(SHARED_DATA, file))), file).toBe(true);
    }
  });
});
