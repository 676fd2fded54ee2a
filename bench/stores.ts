/**
 * Where a benchmark data set lives: a fresh database on PostgreSQL (the benchmark's own cluster, or
 * `--database-url`'s server), or a fresh embedded (PGlite) data directory the service then opens itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster } from './cluster.js';
import { buildDataset, buildEmbeddedDataset, dropDatabase, type Dataset } from './dataset.js';

export type DatabaseKind = 'postgres' | 'embedded';
export const DATABASE_KINDS: readonly DatabaseKind[] = ['postgres', 'embedded'];

export interface Store {
  kind: DatabaseKind;
  data: Dataset;
  /** pgbench's and the SQL replay's connection; none on the embedded database, which has no database ceiling. */
  databaseUrl?: string;
  /** What the report says about the server. */
  server: { server: string; settings?: Record<string, string> };
  /** Drops the database or removes the directory (unless kept), and stops the benchmark's own cluster. */
  remove(): Promise<void>;
  /**
   * Starts a streaming hot standby of the benchmark's own cluster and resolves to the data set's connection string on
   * it (DATABASE_READ_URLS); absent on `--database-url`'s server and the embedded database.
   */
  addStandby?(): Promise<string>;
}

export interface StoreOptions {
  participants: number;
  codeListDir: string;
  log: (message: string) => void;
  /** Keep the database (on `--database-url`'s server) or the embedded data directory. */
  keep: boolean;
}

/** The server the data set goes to: `databaseUrl`'s, else a cluster of the benchmark's own sized for it. */
async function postgresServer(databaseUrl: string | undefined, participants: number, log: (message: string) => void) {
  if (databaseUrl)
    return { adminUrl: databaseUrl, server: { server: databaseUrl.replace(/\/\/[^@]*@/, '//') }, stop: () => {} };
  const cluster = await startCluster(participants);
  process.once('SIGINT', () => {
    cluster.stop();
    process.exit(130);
  });
  log(`own PostgreSQL ${cluster.version} cluster: ${JSON.stringify(cluster.settings)}`);
  return {
    adminUrl: cluster.adminUrl,
    server: { server: `own cluster, PostgreSQL ${cluster.version}`, settings: cluster.settings },
    stop: cluster.stop,
    addStandby: cluster.addStandby,
  };
}

export async function postgresStore(
  options: StoreOptions & { databaseUrl?: string; loadWorkers: number },
): Promise<Store> {
  const { adminUrl, server, stop, addStandby } = await postgresServer(
    options.databaseUrl,
    options.participants,
    options.log,
  );
  try {
    options.log(`building ${options.participants} participants in PostgreSQL`);
    const data = await buildDataset({ ...options, adminUrl, workers: options.loadWorkers });
    // The database goes with the benchmark's own cluster in any case.
    const keep = options.keep && options.databaseUrl !== undefined;
    return {
      kind: 'postgres',
      data,
      databaseUrl: data.databaseUrl,
      server,
      ...(addStandby ? { addStandby: async () => (await addStandby()).url(data.databaseName) } : {}),
      async remove() {
        if (keep) options.log(`kept database ${data.databaseName}`);
        else await dropDatabase(adminUrl, data.databaseName);
        stop();
      },
    };
  } catch (error) {
    stop();
    throw error;
  }
}

export async function embeddedStore(options: StoreOptions): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), 'registry-bench-embedded-'));
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (!options.keep) process.once('exit', removeDir);
  try {
    options.log(`building ${options.participants} participants in the embedded database`);
    const data = await buildEmbeddedDataset({ ...options, dataDir });
    return {
      kind: 'embedded',
      data,
      server: { server: "embedded (PGlite, in the service's process)" },
      async remove() {
        if (options.keep) options.log(`kept the embedded data directory ${dataDir}`);
        else removeDir();
      },
    };
  } catch (error) {
    removeDir();
    throw error;
  }
}
