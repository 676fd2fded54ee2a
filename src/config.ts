import { envSchema } from 'env-schema';
import { Type, type Static } from 'typebox';
import { DEFAULT_PAGE_MAX_BYTES } from './changes/schemas.js';

const ConfigSchema = Type.Object({
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  /** A PostgreSQL server; without it the embedded PostgreSQL keeps its data in REGISTRY_DATA_DIR. */
  DATABASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  REGISTRY_DATA_DIR: Type.String({ default: './data' }),
  /** Hot standbys of DATABASE_URL's primary (connection strings, separated by commas or spaces): the public and long reads come from them. */
  DATABASE_READ_URLS: Type.Optional(Type.String({ minLength: 1 })),
  /** A standby whose replay is further behind the primary's change log than this takes no reads until it catches up. */
  DATABASE_READ_MAX_LAG_SECONDS: Type.Number({ default: 5, exclusiveMinimum: 0 }),
  REGISTRY_ADMIN_USERNAME: Type.String({ default: 'admin', minLength: 1 }),
  REGISTRY_ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 12 })),
  /** The demo set (providers, a SERVICE_PROVIDER user, participants); default: only on the embedded database. */
  REGISTRY_DEMO: Type.Optional(Type.Boolean()),
  LOG_LEVEL: Type.String({ default: 'info' }),
  /** `false`: reads (GET, HEAD) answered below 500 write no request lines; writes and 5xx still do. */
  LOG_REQUESTS: Type.Boolean({ default: true }),
  /** Largest accepted request body, in bytes. */
  BODY_LIMIT: Type.Integer({ default: 1024 * 1024, minimum: 1 }),
  /** Processes serving the API on one port (node:cluster); more than 1 only on PostgreSQL. */
  REGISTRY_WORKERS: Type.Integer({ default: 1, minimum: 1, maximum: 64 }),
  /** Health and metrics, apart from the API: loopback unless configured otherwise. */
  MANAGEMENT_PORT: Type.Integer({ default: 9090, minimum: 0, maximum: 65535 }),
  MANAGEMENT_HOST: Type.String({ default: '127.0.0.1' }),
  /** Failed logins of one username from one address before that address is refused (429) for a while. */
  LOGIN_MAX_FAILURES: Type.Integer({ default: 10, minimum: 1 }),
  LOGIN_LOCK_SECONDS: Type.Integer({ default: 300, minimum: 1 }),
  /** The base URL clients reach the service at (behind a TLS proxy): the SMP's `href`s start with it. */
  REGISTRY_PUBLIC_URL: Type.Optional(Type.String({ minLength: 1 })),
  /** The SMP signing key and its certificate (PEM files); without them see src/smp/keys.ts. */
  REGISTRY_SMP_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  REGISTRY_SMP_CERTIFICATE_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** The SML (BDMSL) participants are registered with; unset: nothing is sent (said at start-up). */
  SML_URL: Type.Optional(Type.String({ minLength: 1 })),
  SML_SMP_ID: Type.Optional(Type.String({ minLength: 1 })),
  /** PEM files of the SMP's client certificate and its key, for mutual TLS with the SML. */
  SML_CLIENT_CERT_FILE: Type.Optional(Type.String({ minLength: 1 })),
  SML_CLIENT_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** The Peppol Directory participants are pushed to; unset: nothing is sent. Same client certificate. */
  DIRECTORY_URL: Type.Optional(Type.String({ minLength: 1 })),
  // Sign-in on the open internet
  /** Proxies (addresses, CIDRs, comma-separated) whose X-Forwarded-For is believed; unset: none, the peer is the client. */
  REGISTRY_TRUSTED_PROXIES: Type.Optional(Type.String()),
  /** Password checks (scrypt) running at once over all clients; the rest wait their turn. */
  LOGIN_CHECKS_AT_ONCE: Type.Integer({ default: 1, minimum: 1 }),
  /** Password checks of one client address running or waiting; beyond them that address gets 429 at once. */
  LOGIN_CHECKS_PER_ADDRESS: Type.Integer({ default: 4, minimum: 1 }),
  // SMP certificate rollover and the SML's CA (issue 24).
  /** The next SMP signing key and its certificate (PEM files): they replace the current pair at the instant below. */
  REGISTRY_SMP_NEXT_KEY_FILE: Type.Optional(Type.String({ minLength: 1 })),
  REGISTRY_SMP_NEXT_CERTIFICATE_FILE: Type.Optional(Type.String({ minLength: 1 })),
  /** The instant of the rollover (ISO 8601 with its offset, e.g. 2026-03-19T00:00:00Z), as announced to the SML. */
  REGISTRY_SMP_NEXT_CERTIFICATE_FROM: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  /** PEM file of the CA certificates the SML's server certificate must chain to; unset: Node's public roots. */
  SML_CA_FILE: Type.Optional(Type.String({ minLength: 1 })),
  // Connections and long polls (issue 23).
  /** A request must arrive whole, headers and body, within this many seconds; else 408 and the connection closes. */
  REQUEST_TIMEOUT_SECONDS: Type.Integer({ default: 30, minimum: 1 }),
  /** Requests one client address may have in flight at once (per process); beyond it 429 at once. */
  MAX_REQUESTS_PER_ADDRESS: Type.Integer({ default: 64, minimum: 1 }),
  /** The change feed's `wait` polls one user may hold at once (per process); beyond it 429 at once. */
  MAX_FEED_POLLS_PER_USER: Type.Integer({ default: 10, minimum: 1 }),
  // Bounded text, private files, quiet logs (issue 23)
  /** The most JSON one page of the audit or the change feed carries, in bytes; a page stops before passing it. */
  CHANGE_PAGE_MAX_BYTES: Type.Integer({ default: DEFAULT_PAGE_MAX_BYTES, minimum: 1 }),
});

export function directoryOptionsOf(config: Config) {
  if (!config.DIRECTORY_URL) return undefined;
  return { url: config.DIRECTORY_URL, clientCertificateFile: config.SML_CLIENT_CERT_FILE, clientKeyFile: config.SML_CLIENT_KEY_FILE };
}

/** The SML options of a configuration; undefined when no SML is configured. */
export function smlOptionsOf(config: Config) {
  if (!config.SML_URL) return undefined;
  if (!config.SML_SMP_ID) throw new Error('SML_URL is set but SML_SMP_ID is not: the SML needs this SMP\'s identifier');
  return {
    url: config.SML_URL, smpId: config.SML_SMP_ID,
    clientCertificateFile: config.SML_CLIENT_CERT_FILE, clientKeyFile: config.SML_CLIENT_KEY_FILE,
    caFile: config.SML_CA_FILE,
  };
}

export type Config = Static<typeof ConfigSchema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return envSchema<Config>({ schema: ConfigSchema, data: env, dotenv: false });
}
