import pg from 'pg';
import type { ConnectionTargets } from './connection-string.js';

/** No host of the connection string is one the registry may write to: a database that cannot be reached (SQLSTATE class 08). */
export class NoPrimaryError extends Error {
  readonly code = '08001';
}

/** How long one host may take to accept a connection and answer whether it takes writes. */
const PROBE_TIMEOUT_MS = 3000;
/** After a search found no primary, calls within this time fail at once rather than try every host again. */
const SEARCH_PAUSE_MS = 1000;

/** Whether the server at `url` takes writes: not a standby in recovery, and not read-only by default. */
async function takesWrites(url: string): Promise<boolean> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    application_name: 'registry-primary-search',
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ writes: boolean }>(
      "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writes",
    );
    return rows[0]?.writes === true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The host the registry works on among `targets`: the first that answers (and takes writes, when the connection string
 * asks for that), kept until it fails as unreachable or refuses a write as read-only; then the next use searches again,
 * host by host in their order, so a promoted standby is found without a restart. One host that need not take writes is
 * simply used, as before.
 */
export function primaryHost(targets: ConnectionTargets) {
  const fixed = targets.hosts.length === 1 && !targets.writable;
  let current: string | undefined = fixed ? targets.hosts[0]?.url : undefined;
  let searching: Promise<string> | undefined;
  let lastFailure: { at: number; error: Error } | undefined;

  async function search(): Promise<string> {
    const failures: string[] = [];
    for (const { url, name } of targets.hosts) {
      try {
        if (!targets.writable || (await takesWrites(url))) return url;
        failures.push(`${name} takes no writes`);
      } catch (error) {
        failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    throw new NoPrimaryError(`no host of DATABASE_URL takes writes (${failures.join('; ')})`);
  }

  return {
    /** The connection string of the host to use now. */
    async url(): Promise<string> {
      if (current !== undefined) return current;
      if (lastFailure && Date.now() - lastFailure.at < SEARCH_PAUSE_MS) throw lastFailure.error;
      searching ??= search()
        .then(
          (url) => {
            current = url;
            lastFailure = undefined;
            return url;
          },
          (error: Error) => {
            lastFailure = { at: Date.now(), error };
            throw error;
          },
        )
        .finally(() => (searching = undefined));
      return searching;
    },
    /** `url` failed as unreachable or read-only: the next use searches again (unless it is the one fixed host). */
    lost(url: string): void {
      if (!fixed && current === url) current = undefined;
    },
  };
}
