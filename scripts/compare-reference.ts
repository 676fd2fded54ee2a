/**
 * Compares the project's own copies with a reference folder the caller names (the team's `shared/`; the project
 * assumes no such folder, so this is a check to run by hand, not a test):
 * - `reference-data/` is byte-identical to `shared/data/`, file for file (their READMEs apart);
 * - `test/reliability/role-table.md` is the summary table of `shared/spec/registry-service.md`, as it stands.
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

const differences = [...referenceDataDifferences(join(ROOT, 'reference-data'), join(shared, 'data')), ...roleTableDifferences()];
for (const difference of differences) console.error(difference);
console.log(differences.length === 0 ? `the project's copies match ${shared}` : `${differences.length} differences from ${shared}`);
process.exit(differences.length === 0 ? 0 : 1);

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name !== 'README.md')
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort();
}

function referenceDataDifferences(own: string, reference: string): string[] {
  const ownFiles = new Set(filesUnder(own));
  const referenceFiles = filesUnder(reference);
  return [
    ...referenceFiles.filter((file) => !ownFiles.has(file)).map((file) => `reference-data/${file}: missing`),
    ...[...ownFiles].filter((file) => !referenceFiles.includes(file)).map((file) => `reference-data/${file}: not in the reference`),
    ...referenceFiles.filter((file) => ownFiles.has(file) && !readFileSync(join(own, file)).equals(readFileSync(join(reference, file))))
      .map((file) => `reference-data/${file}: differs`),
  ];
}

/** The specification's summary table, as it stands between these two headings, against the project's copy. */
function roleTableDifferences(): string[] {
  const spec = readFileSync(join(shared, 'spec', 'registry-service.md'), 'utf8');
  const table = spec.slice(spec.indexOf('### Summary table'), spec.indexOf('### Rules common to operations'));
  return readFileSync(join(ROOT, 'test', 'reliability', 'role-table.md'), 'utf8') === table
    ? [] : ['test/reliability/role-table.md: differs from the summary table of spec/registry-service.md'];
}
