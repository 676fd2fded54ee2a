/**
 * The import scenario alone, on a fresh database of either kind (`npm run bench` measures PostgreSQL only):
 *   npx tsx bench/import-only.ts --lines 100000 [--embedded] [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 * Without --embedded or --database-url it runs on the benchmark's own PostgreSQL cluster, sized for the lines as for a
 * data set of that many participants (bench/cluster.ts): the settings a production registry of that size would have.
 * Needs the built command line (`npm run build`). The database gets the Peppol catalogue and the demo set (two providers); the
 * lines name two unrestricted processes each; a PostgreSQL database is created for the run and dropped after it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabaseExclusively } from '../src/db/data-dir-lock.js';
import { createDemoSet } from '../src/setup/demo.js';
import { loadCatalogue } from './catalogue.js';
import { startCluster } from './cluster.js';
import { createDatabase, databaseUrlOf, dropDatabase, unrestrictedProcesses } from './dataset.js';
import { timeImport } from './import.js';

const { values: args } = parseArgs({
  options: {
    lines: { type: 'string', default: '100000' },
    embedded: { type: 'boolean', default: false },
    'database-url': { type: 'string' },
  },
});
const log = (message: string) => console.error(`[import-only] ${message}`);

const cluster = args.embedded || args['database-url'] ? undefined : await startCluster(Number(args.lines));
const adminUrl = args['database-url'] ?? cluster?.adminUrl ?? '';
if (cluster) log(`own PostgreSQL ${cluster.version} cluster: ${JSON.stringify(cluster.settings)}`);
const dataDir = args.embedded ? mkdtempSync(join(tmpdir(), 'registry-import-only-')) : undefined;
const databaseName = `registry_import_${Date.now()}`;
const database: Record<string, string> = dataDir
  ? { REGISTRY_DATA_DIR: dataDir }
  : { DATABASE_URL: databaseUrlOf(adminUrl, databaseName) };
if (!dataDir) await createDatabase(adminUrl, databaseName);
try {
  const db = await openDatabaseExclusively({ REGISTRY_DATA_DIR: '', ...database }, 'the import benchmark');
  let target;
  try {
    await loadCatalogue(db, join(import.meta.dirname, '../reference-data/peppol-codelists-v9.7'));
    await createDemoSet(db);
    const [first, second] = await unrestrictedProcesses(db);
    const providers = await db.query<{ id: string; username: string }>(
      "SELECT id, '' AS username FROM service_providers ORDER BY id",
    );
    target = { database, providers, freeProcessIds: [first?.id as string, second?.id as string] as [string, string] };
  } finally {
    await db.close();
  }
  const run = await timeImport(target, Number(args.lines), log);
  console.log(
    JSON.stringify({
      database: dataDir ? 'embedded' : 'postgres',
      ...run,
      rowsPerSecond: Math.round(run.rowsPerSecond),
    }),
  );
} finally {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  else await dropDatabase(adminUrl, databaseName);
  cluster?.stop();
}
