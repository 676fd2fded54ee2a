/**
 * The benchmark's own PostgreSQL cluster: the machine's PostgreSQL binaries (dev/local-cluster.ts), `initdb` into a
 * temporary directory, a port of its own and memory sized for the data set, so that results do not depend on a shared
 * server's defaults. Durability stays as in production (fsync and synchronous_commit on). With `--standby`, a streaming
 * hot standby beside it, for the configuration whose public reads go to a standby.
 */
import { serverBinaries, startPrimary, startStandby, type LocalServer } from '../dev/local-cluster.js';

export interface Cluster {
  adminUrl: string;
  settings: Record<string, string>;
  version: string;
  /**
   * Starts a streaming hot standby of the cluster with the same settings (a base backup: made after the data set, it
   * copies it) and resolves to its server; it stops with the cluster.
   */
  addStandby(): Promise<LocalServer>;
  stop(): void;
}

/**
 * Settings for a data set of `participants`: shared_buffers large enough to hold the participant tables and their
 * indexes (about 2.5 kB per participant), the rest as the README's operations part recommends.
 */
export function clusterSettings(participants: number): Record<string, string> {
  const sharedMiB = Math.min(4096, Math.max(256, Math.ceil((participants * 2.5) / 1024)));
  return {
    shared_buffers: `${sharedMiB}MB`,
    effective_cache_size: `${Math.max(1024, sharedMiB * 3)}MB`,
    work_mem: '16MB',
    maintenance_work_mem: '512MB',
    max_connections: '200',
    random_page_cost: '1.1',
    effective_io_concurrency: '200',
    jit: 'off',
    max_wal_size: '4GB',
    checkpoint_timeout: '15min',
    wal_compression: 'on',
    max_parallel_workers_per_gather: '2',
    fsync: 'on',
    synchronous_commit: 'on',
  };
}

/** Creates and starts the cluster; `stop()` stops it and its standby and removes their directories (also on exit). */
export async function startCluster(participants: number): Promise<Cluster> {
  const settings = clusterSettings(participants);
  const standbys: LocalServer[] = [];
  let primary: LocalServer;
  try {
    primary = await startPrimary({ settings });
  } catch (error) {
    throw new Error(
      `could not start the benchmark's PostgreSQL cluster (or pass --database-url): ${(error as Error).message}`,
      { cause: error },
    );
  }
  return {
    adminUrl: primary.url(),
    settings,
    version: serverBinaries().version,
    async addStandby() {
      const standby = await startStandby(primary, { settings });
      standbys.push(standby);
      return standby;
    },
    stop: () => [...standbys, primary].forEach((server) => server.stop()),
  };
}
