import pg from 'pg';

/**
 * What a connection string names: each of its hosts as a connection string of its own, in order, and whether a
 * connection must accept writes (libpq's `target_session_attrs=read-write` or `primary`). node-postgres takes one host
 * only and ignores `target_session_attrs`; this is the least of libpq's multi-host behaviour the registry needs to
 * find its primary again after a failover without a restart.
 */
export interface ConnectionTargets {
  urls: string[];
  writable: boolean;
}

/** A setting the operator must change: said at start, in one line. */
export class ConnectionStringError extends Error {}

const URL_PARTS = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/i;
const SESSION_ATTRIBUTES: Record<string, boolean> = { any: false, 'read-write': true, primary: true };

export function connectionTargets(connectionString: string): ConnectionTargets {
  const parts = URL_PARTS.exec(connectionString);
  if (!parts) return { urls: [connectionString], writable: false };
  const [, scheme, userInfo, hostList = '', rest = ''] = parts;
  const [pathAndQuery = '', fragment] = rest.split('#');
  const [path = '', query = ''] = pathAndQuery.split('?');
  const params = new URLSearchParams(query);
  const attributes = params.get('target_session_attrs') ?? 'any';
  const writable = SESSION_ATTRIBUTES[attributes];
  if (writable === undefined) {
    throw new ConnectionStringError(`target_session_attrs=${attributes} is not supported in DATABASE_URL: use read-write (or primary) to find the primary among its hosts, or any`);
  }
  const hosts = hostList.split(',');
  if (hosts.length === 1 && !params.has('target_session_attrs')) return { urls: [connectionString], writable };
  params.delete('target_session_attrs');
  const tail = `${path}${params.size > 0 ? `?${params.toString()}` : ''}${fragment === undefined ? '' : `#${fragment}`}`;
  return { urls: hosts.map((host) => `${scheme}${userInfo === undefined ? '' : `${userInfo}@`}${host}${tail}`), writable };
}

/** No host of the connection string is one the registry may write to: a database that cannot be reached (SQLSTATE class 08). */
class NoPrimaryError extends Error {
  readonly code = '08001';
}

/** How long one host may take to accept a connection and answer whether it takes writes. */
const PROBE_TIMEOUT_MS = 3000;
/** After a search found no primary, calls within this time fail at once rather than try every host again. */
const SEARCH_PAUSE_MS = 1000;

/** Whether the server at `url` takes writes: not a standby in recovery, and not read-only by default. */
async function takesWrites(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_TIMEOUT_MS, application_name: 'registry-primary-search' });
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
  const fixed = targets.urls.length === 1 && !targets.writable;
  let current: string | undefined = fixed ? targets.urls[0] : undefined;
  let searching: Promise<string> | undefined;
  let lastFailure: { at: number; error: Error } | undefined;

  async function search(): Promise<string> {
    const failures: string[] = [];
    for (const url of targets.urls) {
      try {
        if (!targets.writable || await takesWrites(url)) return url;
        failures.push(`${hostOf(url)} takes no writes`);
      } catch (error) {
        failures.push(`${hostOf(url)}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    throw new NoPrimaryError(`no host of DATABASE_URL takes writes (${failures.join('; ')})`);
  }

  return {
    /** The connection string of the host to use now. */
    async url(): Promise<string> {
      if (current !== undefined) return current;
      if (lastFailure && Date.now() - lastFailure.at < SEARCH_PAUSE_MS) throw lastFailure.error;
      searching ??= search().then((url) => {
        current = url;
        lastFailure = undefined;
        return url;
      }, (error: Error) => {
        lastFailure = { at: Date.now(), error };
        throw error;
      }).finally(() => (searching = undefined));
      return searching;
    },
    /** `url` failed as unreachable or read-only: the next use searches again (unless it is the one fixed host). */
    lost(url: string): void {
      if (!fixed && current === url) current = undefined;
    },
  };
}

/** `host:port` of a connection string, without its credentials: what logs and status may show. */
export function hostOf(url: string): string {
  const parts = URL_PARTS.exec(url);
  if (!parts) return 'the database';
  const database = /^\/([^/?#]*)/.exec(parts[4] ?? '')?.[1];
  return `${parts[3]}${database ? `/${database}` : ''}`;
}
