/**
 * Compares the project's own copies with a reference folder the caller names (the team's `shared/`; the project
 * assumes no such folder, so this is a check to run by hand, not a test):
 * - `reference-data/` is byte-identical to `shared/data/`, file for file (their READMEs apart);
 * - `docs/spec/` (the specification and its decisions) is byte-identical to `shared/spec/`, the same way.
 *
 *   npx tsx scripts/compare-reference.ts --shared DIR
 *
 * Exits 0 when both match, 1 naming each difference, 2 when no folder is named or it is not there.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const { values } = parseArgs({ options: { shared: { type: 'string' } } });
if (values.shared === undefined) {
  console.error('name the reference folder: --shared DIR (the folder holding data/ and spec/)');
  process.exit(2);
}
const shared = resolve(values.shared);
if (!existsSync(shared)) {
  console.error(`no reference folder at ${shared}`);
  process.exit(2);
}

const differences = [
  ...copyDifferences('reference-data', join(shared, 'data')),
  ...copyDifferences('docs/spec', join(shared, 'spec')),
];
for (const difference of differences) console.error(difference);
console.log(
  differences.length === 0
    ? `the project's copies match ${shared}`
    : `${differences.length} differences from ${shared}`,
);
process.exit(differences.length === 0 ? 0 : 1);

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name !== 'README.md')
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort();
}

/** The files of the project's folder `copy` against those of `reference`, file for file (their READMEs apart). */
function copyDifferences(copy: string, reference: string): string[] {
  const own = join(ROOT, copy);
  const ownFiles = new Set(filesUnder(own));
  const referenceFiles = filesUnder(reference);
  return [
    ...referenceFiles.filter((file) => !ownFiles.has(file)).map((file) => `${copy}/${file}: missing`),
    ...[...ownFiles]
      .filter((file) => !referenceFiles.includes(file))
      .map((file) => `${copy}/${file}: not in the reference`),
    ...referenceFiles
      .filter(
        (file) => ownFiles.has(file) && !readFileSync(join(own, file)).equals(readFileSync(join(reference, file))),
      )
      .map((file) => `${copy}/${file}: differs`),
  ];
}
