import { parse, type ConnectionOptions } from 'pg-connection-string';

/** A setting the operator must change: said at start, in one line. */
export class ConnectionStringError extends Error {}

/** One server a connection string names. */
export interface ConnectionTarget {
  /** The connection string of this server alone. */
  url: string;
  /** `host:port/database` as the driver reads them, never the user or password: what logs, status and metrics show. */
  name: string;
}

/**
 * What a connection string names: each of its hosts, in order, and whether a connection must accept writes (libpq's
 * `target_session_attrs=read-write` or `primary`). node-postgres takes one host only and ignores `target_session_attrs`;
 * this is the least of libpq's multi-host behaviour the registry needs to find its primary again after a failover
 * without a restart.
 */
export interface ConnectionTargets {
  hosts: ConnectionTarget[];
  writable: boolean;
}

const SCHEME = /^postgres(?:ql)?:\/\//i;
const SESSION_ATTRIBUTES: Record<string, boolean> = { any: false, 'read-write': true, primary: true };

/**
 * `postgres://user:password@host1:5432,host2:5433/db?...` once per host, which node-postgres's parser reads then. The
 * authority ends at the first `/`, `?` or `#`, and its credentials at its last `@`, as the driver's URL parser (WHATWG)
 * reads them: a password may hold `@`, `:` and `,`.
 */
function singleHostStrings(connectionString: string): string[] {
  const scheme = SCHEME.exec(connectionString)?.[0];
  if (scheme === undefined) return [connectionString];
  const afterScheme = connectionString.slice(scheme.length);
  const authority = afterScheme.split(/[/?#]/, 1)[0] ?? '';
  const credentialsEnd = authority.lastIndexOf('@') + 1;
  const hosts = authority.slice(credentialsEnd).split(',');
  if (hosts.length === 1) return [connectionString];
  const credentials = authority.slice(0, credentialsEnd);
  const rest = afterScheme.slice(authority.length);
  return hosts.map((host) => `${scheme}${credentials}${host}${rest}`);
}

/** The driver's reading of one server's connection string; one it cannot read is the operator's to correct. */
function driverOptions(url: string, setting: string): ConnectionOptions {
  try {
    return parse(url);
  } catch (error) {
    // The parser's error never holds the string (it redacts it): the password stays out of the line.
    throw new ConnectionStringError(
      `${setting} is not a connection string the driver reads (${error instanceof Error ? error.message : String(error)}): ` +
        'percent-encode the characters of its user and password that a URL gives a meaning (/ as %2F, ? as %3F, # as %23, % as %25)',
    );
  }
}

/** The host and port the driver takes when the string names none. */
const DEFAULT_HOST = 'localhost';
const DEFAULT_PORT = '5432';

function nameOf({ host, port, database }: ConnectionOptions): string {
  const server = host || DEFAULT_HOST;
  return `${server.includes(':') ? `[${server}]` : server}:${port || DEFAULT_PORT}${database ? `/${database}` : ''}`;
}

/** `setting`: the setting that holds the connection string, named when it is refused. */
export function connectionTargets(connectionString: string, setting = 'DATABASE_URL'): ConnectionTargets {
  const hosts = singleHostStrings(connectionString).map((url) => ({ url, options: driverOptions(url, setting) }));
  const attributes = hosts[0]?.options.target_session_attrs ?? 'any';
  const writable = typeof attributes === 'string' ? SESSION_ATTRIBUTES[attributes] : undefined;
  if (writable === undefined) {
    throw new ConnectionStringError(
      `target_session_attrs=${String(attributes)} is not supported in ${setting}: use read-write (or primary) to find the primary among its hosts, or any`,
    );
  }
  return { hosts: hosts.map(({ url, options }) => ({ url, name: nameOf(options) })), writable };
}

/** The servers a connection string names, as logs, status and metrics show them (never its credentials). */
export function serverNames(connectionString: string, setting?: string): string {
  return connectionTargets(connectionString, setting)
    .hosts.map((host) => host.name)
    .join(', ');
}
