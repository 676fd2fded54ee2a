import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startPrimary, startStandby, type LocalServer } from '../../dev/local-cluster.js';

/** The database the service works in on a test cluster. */
const DATABASE = 'registry';

/** A primary and a streaming hot standby of it, made from the machine's PostgreSQL binaries for one test file. */
export interface TestCluster {
  primary: LocalServer;
  standby: LocalServer;
  /** The service's database on `server`. */
  url(server: LocalServer): string;
  /** One statement on `server` (the service's database) through a connection of its own. */
  sql<T = Record<string, unknown>>(server: LocalServer, statement: string): Promise<T[]>;
  /** Resolves once the standby has replayed everything the primary had written when it was called. */
  replayed(): Promise<void>;
  /** How many times `server` ran statements whose text contains `fragment` (pg_stat_statements). */
  calls(server: LocalServer, fragment: string): Promise<number>;
  /**
   * A superuser `name` that signs in to both servers with `password` only (scram-sha-256 in their pg_hba.conf, ahead of
   * the trust of every other user); resolves once the standby has it.
   */
  addPasswordRole(name: string, password: string): Promise<void>;
  stop(): void;
}

async function sqlOn<T>(url: string, statement: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(statement)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * Starts the cluster (fast: its files are not forced to disk, which a process crash does not need); `stop()` stops and
 * removes it, and a start that fails halfway stops what it started. `synchronous`: every commit waits for the standby's
 * flush (`synchronous_standby_names`), so a failover loses nothing acknowledged.
 */
export async function startTestCluster(options: { synchronous?: boolean } = {}): Promise<TestCluster> {
  const servers: LocalServer[] = [];
  const stop = () => servers.reverse().forEach((server) => server.stop());
  // pg_stat_statements: which statements each server ran, counted at once (the other statistics are flushed lazily).
  const fast = { durable: false, settings: { fsync: 'off', shared_preload_libraries: 'pg_stat_statements' } };
  try {
    const primary = await startPrimary(fast);
    servers.push(primary);
    await sqlOn(primary.url(), `CREATE DATABASE ${DATABASE}`);
    await sqlOn(primary.url(DATABASE), 'CREATE EXTENSION pg_stat_statements');
    const standby = await startStandby(primary, fast);
    servers.push(standby);
    if (options.synchronous) {
      await sqlOn(primary.url(), "ALTER SYSTEM SET synchronous_standby_names = '*'");
      await sqlOn(primary.url(), 'SELECT pg_reload_conf()');
    }
    const url = (server: LocalServer) => server.url(DATABASE);
    const sql = <T>(server: LocalServer, statement: string) => sqlOn<T>(url(server), statement);
    const replayed = async () => {
      const [{ lsn } = { lsn: '' }] = await sql<{ lsn: string }>(primary, 'SELECT pg_current_wal_lsn() AS lsn');
      for (;;) {
        const [row] = await sql<{ done: boolean }>(
          standby,
          `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS done`,
        );
        if (row?.done) return;
        await sleep(20);
      }
    };
    return {
      primary,
      standby,
      url,
      sql,
      replayed,
      stop,
      async calls(server, fragment) {
        const [row] = await sql<{ calls: number }>(
          server,
          `SELECT coalesce(sum(calls), 0)::int AS calls FROM pg_stat_statements WHERE query LIKE '%' || ${pg.escapeLiteral(fragment)} || '%'`,
        );
        return row?.calls ?? 0;
      },
      async addPasswordRole(name, password) {
        await sqlOn(
          primary.url(),
          `CREATE ROLE ${pg.escapeIdentifier(name)} LOGIN SUPERUSER PASSWORD ${pg.escapeLiteral(password)}`,
        );
        for (const server of [primary, standby]) {
          const rules = join(server.dataDir, 'pg_hba.conf');
          writeFileSync(rules, `host all ${name} 127.0.0.1/32 scram-sha-256\n${readFileSync(rules, 'utf8')}`);
          await sqlOn(server.url(), 'SELECT pg_reload_conf()');
        }
        await replayed();
      },
    };
  } catch (error) {
    stop();
    throw error;
  }
}
