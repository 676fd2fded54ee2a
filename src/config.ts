import { envSchema } from 'env-schema';
import { Type, type Static } from 'typebox';
import { DEFAULT_PAGE_MAX_BYTES } from './changes/schemas.js';
import { DEFAULT_PEER_ANSWER_MAX_BYTES, DEFAULT_PEER_TIMEOUT_MS } from './http/peer-http.js';
import { DEFAULT_REGISTER_WAIT_MS } from './national-register/client.js';
import type { NationalRegisterSettings } from './national-register/register-check.js';

/** pino's levels: each logs itself and the levels before it; `silent` logs nothing. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const ConfigSchema = Type.Object({
  PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  /** A PostgreSQL server; without it the embedded PostgreSQL keeps its data in REGISTRY_DATA_DIR. */
  DATABASE_URL: Type.Optional(
    Type.String({
      pattern: '^postgres(ql)?://',
      description: 'a PostgreSQL URL: postgres://user:password@host:port/database',
    }),
  ),
  /** How long a start (or a command) waits for a PostgreSQL server that does not answer yet, in seconds. */
  DATABASE_WAIT_SECONDS: Type.Integer({ default: 30, minimum: 0, maximum: 3600 }),
  REGISTRY_DATA_DIR: Type.String({ default: './data' }),
  /** Hot standbys of DATABASE_URL's primary (connection strings, separated by commas or spaces): the public and long reads come from them. */
  DATABASE_READ_URLS: Type.Optional(Type.String({ minLength: 1 })),
  /** A standby whose replay is further behind the primary's change log than this takes no reads until it catches up. */
  DATABASE_READ_MAX_LAG_SECONDS: Type.Number({ default: 5, exclusiveMinimum: 0 }),
  REGISTRY_ADMIN_USERNAME: Type.String({ default: 'admin', minLength: 1 }),
  REGISTRY_ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 12 })),
  /** The demo set (providers, a SERVICE_PROVIDER user, participants); default: only on the embedded database. */
  REGISTRY_DEMO: Type.Optional(Type.Boolean()),
  LOG_LEVEL: Type.Enum(LOG_LEVELS, { default: 'info' }),
  /** `false`: reads (GET, HEAD) answered below 500 write no request lines; writes and 5xx still do. */
  LOG_REQUESTS: Type.Boolean({ default: true }),
  /**
   * `false`: participant searches are answered by the database's trigram index alone, and no instance holds them in
   * memory (at 2,000,000 participants some 475 MiB of resident memory per instance).
   */
  PARTICIPANT_SEARCH_IN_MEMORY: Type.Boolean({ default: true }),
  /**
   * `false` (a test environment only): a new participant's organization identifier is not refused when it breaks its
   * scheme's rule (the code list's pattern and check digit); it is stored and listed with its fault.
   */
  IDENTIFIER_VALUE_CHECKS: Type.Boolean({ default: true }),
  /** Largest accepted request body, in bytes. */
  BODY_LIMIT: Type.Integer({ default: 1024 * 1024, minimum: 1 }),
  /** Processes serving the API on one port (node:cluster); more than 1 only on PostgreSQL. */
  REGISTRY_WORKERS: Type.Integer({ default: 1, minimum: 1, maximum: 64 }),
  /** Health and metrics, apart from the API: loopback unless configured otherwise. */
  MANAGEMENT_PORT: Type.Integer({ default: 9090, minimum: 0, maximum: 65535 }),
  MANAGEMENT_HOST: Type.String({ default: '127.0.0.1' }),
  /** Failed sign-ins of one username from one address before that address is refused (429) for a while. */
  SIGN_IN_MAX_FAILURES: Type.Integer({ default: 10, minimum: 1 }),
  SIGN_IN_LOCK_SECONDS: Type.Integer({ default: 300, minimum: 1 }),
  /** Locks of usernames one client address may hold; at one more, every username from it is locked (one lock). */
  SIGN_IN_MAX_LOCKS_PER_ADDRESS: Type.Integer({ default: 3, minimum: 1 }),
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
  SIGN_IN_CHECKS_AT_ONCE: Type.Integer({ default: 1, minimum: 1 }),
  /** Password checks of one client address running or waiting; beyond them that address gets 429 at once. */
  SIGN_IN_CHECKS_PER_ADDRESS: Type.Integer({ default: 4, minimum: 1 }),
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
  // Answers an HTTP cache may keep (issue 49, item 3).
  /** How long a cache in front may give a public read's answer (the SMP, the public lookup) without asking again; 0: it asks each time. */
  PUBLIC_MAX_AGE_SECONDS: Type.Integer({ default: 0, minimum: 0, maximum: 86400 }),
  /** The change feed's `wait` polls one user may hold at once (per process); beyond it 429 at once. */
  MAX_FEED_POLLS_PER_USER: Type.Integer({ default: 10, minimum: 1 }),
  // Bounded text, private files, quiet logs (issue 23)
  /** The most JSON one page of the audit or the change feed carries, in bytes; a page stops before passing it. */
  CHANGE_PAGE_MAX_BYTES: Type.Integer({ default: DEFAULT_PAGE_MAX_BYTES, minimum: 1 }),
  // Status and certificates (issue 32).
  /** A certificate the registry publishes or presents that expires within this many days is logged (at start, daily) and listed in the status. */
  CERTIFICATE_WARNING_DAYS: Type.Integer({ default: 30, minimum: 0, maximum: 3650 }),
  // The network lifecycle held against peers (issue 29).
  /** A call to the SML or the Directory ends after this many seconds in all, whatever has arrived meanwhile. */
  NETWORK_CALL_TIMEOUT_SECONDS: Type.Integer({ default: DEFAULT_PEER_TIMEOUT_MS / 1000, minimum: 1, maximum: 300 }),
  /** Calls to the SML in flight at once (each a list of up to SML_LIST_SIZE organizations). */
  SML_CALLS_AT_ONCE: Type.Integer({ default: 4, minimum: 1, maximum: 64 }),
  /** Calls to the Directory in flight at once (one organization a call). */
  DIRECTORY_CALLS_AT_ONCE: Type.Integer({ default: 16, minimum: 1, maximum: 256 }),
  /** The organizations one CreateList or DeleteList carries at most; 1: every organization in its own call. */
  SML_LIST_SIZE: Type.Integer({ default: 100, minimum: 1, maximum: 1000 }),
  /** The most bytes an answer of the SML or the Directory may carry; a larger one ends the call. */
  NETWORK_ANSWER_MAX_BYTES: Type.Integer({
    default: DEFAULT_PEER_ANSWER_MAX_BYTES,
    minimum: 1024,
    maximum: 64 * 1024 * 1024,
  }),
  // Norwegian organizations against Enhetsregisteret (issue 50, item 4).
  /** The register's open API (`…/enhetsregisteret/api`); unset: no organization is checked. */
  NATIONAL_REGISTER_URL: Type.Optional(
    Type.String({
      pattern: '^https?://',
      description: 'an http(s) URL, e.g. https://data.brreg.no/enhetsregisteret/api',
    }),
  ),
  /** The longest a new participant waits for the register (its turn and the call); then it is accepted, unconfirmed. */
  NATIONAL_REGISTER_WAIT_SECONDS: Type.Integer({ default: DEFAULT_REGISTER_WAIT_MS / 1000, minimum: 1, maximum: 30 }),
  /** Lookups of one service provider in flight at once (per process); beyond them 429. */
  NATIONAL_REGISTER_LOOKUPS_PER_PROVIDER: Type.Integer({ default: 2, minimum: 1, maximum: 64 }),
  /** Re-checks of existing Norwegian organizations a minute, over all instances; 0: none. */
  NATIONAL_REGISTER_RECHECK_PER_MINUTE: Type.Integer({ default: 30, minimum: 0, maximum: 6000 }),
  /** An organization is re-checked this many hours after the register's last answer for it. */
  NATIONAL_REGISTER_RECHECK_AFTER_HOURS: Type.Integer({ default: 24, minimum: 0, maximum: 24 * 365 }),
});

/**
 * A setting the operator must change before a start: its message says which, what it is, and what is allowed. A
 * secret's value (a password, a DATABASE_URL that may hold one) is never repeated.
 */
export class ConfigError extends Error {
  constructor(
    message: string,
    readonly problems: readonly { setting: string; allowed: string }[] = [],
  ) {
    super(message);
  }
}

const SECRET = /PASSWORD|DATABASE_URL/;

type SettingSchema = {
  enum?: readonly string[];
  type?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  description?: string;
};

/** What a setting's schema allows, in words. */
function allowedBy(schema: SettingSchema | undefined): string {
  if (schema?.enum) return `one of ${schema.enum.join(', ')}`;
  if (schema?.pattern) return schema.description ?? `a text that matches ${schema.pattern}`;
  if (schema?.type === 'boolean') return 'true or false';
  if (schema?.type === 'integer') {
    return schema.maximum === undefined
      ? `a whole number of at least ${schema.minimum}`
      : `a whole number from ${schema.minimum} to ${schema.maximum}`;
  }
  return (schema?.minLength ?? 0) > 1
    ? `a text of at least ${schema?.minLength} characters`
    : 'a text that is not empty';
}

/**
 * The old names of settings, still read: the sign-in settings were `LOGIN_*` until "login" and "sign-in" became one
 * word (issue 51). An old name is read only when its new name is not set.
 */
export const SETTING_ALIASES = {
  SIGN_IN_MAX_FAILURES: 'LOGIN_MAX_FAILURES',
  SIGN_IN_LOCK_SECONDS: 'LOGIN_LOCK_SECONDS',
  SIGN_IN_MAX_LOCKS_PER_ADDRESS: 'LOGIN_MAX_LOCKS_PER_ADDRESS',
  SIGN_IN_CHECKS_AT_ONCE: 'LOGIN_CHECKS_AT_ONCE',
  SIGN_IN_CHECKS_PER_ADDRESS: 'LOGIN_CHECKS_PER_ADDRESS',
} as const satisfies Partial<Record<keyof typeof ConfigSchema.properties, string>>;

/** `env` with each setting set only by its old name copied to its new one, and the old name each one came from. */
function withAliases(env: NodeJS.ProcessEnv): { data: NodeJS.ProcessEnv; setAs: Map<string, string> } {
  const data = { ...env };
  const setAs = new Map<string, string>();
  for (const [setting, alias] of Object.entries(SETTING_ALIASES)) {
    if (env[setting] !== undefined || env[alias] === undefined) continue;
    data[setting] = env[alias];
    setAs.set(setting, alias);
  }
  return { data, setAs };
}

/**
 * One ConfigError for every setting env-schema refused, each with its value (unless secret) and what it allows; a
 * setting given by its old name is named as it was given.
 */
function refusedSettings(error: unknown, env: NodeJS.ProcessEnv, setAs: Map<string, string>): ConfigError {
  const paths =
    (error as { errors?: { instancePath: string }[] }).errors?.map((entry) => entry.instancePath.replace(/^\//, '')) ??
    [];
  const settings = [...new Set(paths)].filter((setting) => setting in ConfigSchema.properties);
  if (settings.length === 0) return new ConfigError(`Configuration: ${(error as Error).message}`);
  const problems = settings.map((setting) => ({
    setting: setAs.get(setting) ?? setting,
    allowed: allowedBy(ConfigSchema.properties[setting as keyof typeof ConfigSchema.properties] as SettingSchema),
  }));
  const shown = (setting: string) => (SECRET.test(setting) ? '' : ` is '${env[setting]}'`);
  return new ConfigError(
    problems.map(({ setting, allowed }) => `${setting}${shown(setting)}: it must be ${allowed}.`).join(' '),
    problems,
  );
}

/** The bounds of every call to the SML and the Directory. */
const peerBoundsOf = (config: Config) => ({
  timeoutMs: config.NETWORK_CALL_TIMEOUT_SECONDS * 1000,
  maxAnswerBytes: config.NETWORK_ANSWER_MAX_BYTES,
});

export function directoryOptionsOf(config: Config) {
  if (!config.DIRECTORY_URL) return undefined;
  return {
    url: config.DIRECTORY_URL,
    clientCertificateFile: config.SML_CLIENT_CERT_FILE,
    clientKeyFile: config.SML_CLIENT_KEY_FILE,
    ...peerBoundsOf(config),
  };
}

/** The SML options of a configuration (loadConfig refuses SML_URL without SML_SMP_ID); undefined when no SML is configured. */
export function smlOptionsOf(config: Config) {
  if (!config.SML_URL || !config.SML_SMP_ID) return undefined;
  return {
    url: config.SML_URL,
    smpId: config.SML_SMP_ID,
    clientCertificateFile: config.SML_CLIENT_CERT_FILE,
    clientKeyFile: config.SML_CLIENT_KEY_FILE,
    caFile: config.SML_CA_FILE,
    ...peerBoundsOf(config),
  };
}

/** The sign-in throttle's and the password checks' settings, as buildApp takes them. */
export function signInOptionsOf(config: Config) {
  return {
    signInThrottle: {
      maxFailures: config.SIGN_IN_MAX_FAILURES,
      lockMs: config.SIGN_IN_LOCK_SECONDS * 1000,
      maxLocksPerAddress: config.SIGN_IN_MAX_LOCKS_PER_ADDRESS,
    },
    hashing: { concurrency: config.SIGN_IN_CHECKS_AT_ONCE, perAddress: config.SIGN_IN_CHECKS_PER_ADDRESS },
  };
}

/** Enhetsregisteret's settings; undefined when NATIONAL_REGISTER_URL is unset. */
export function nationalRegisterOptionsOf(config: Config): NationalRegisterSettings | undefined {
  if (!config.NATIONAL_REGISTER_URL) return undefined;
  return {
    url: config.NATIONAL_REGISTER_URL,
    waitMs: config.NATIONAL_REGISTER_WAIT_SECONDS * 1000,
    perClient: config.NATIONAL_REGISTER_LOOKUPS_PER_PROVIDER,
    recheckPerMinute: config.NATIONAL_REGISTER_RECHECK_PER_MINUTE,
    recheckAfterSeconds: config.NATIONAL_REGISTER_RECHECK_AFTER_HOURS * 3600,
  };
}

export type Config = Static<typeof ConfigSchema>;

const PUBLIC_URL_ALLOWED = 'an absolute http or https URL with no query or fragment, such as https://smp.example.no';

/** Read by the WHATWG URL parser, the one the links are resolved with. */
function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.hostname !== '' &&
    url.search === '' &&
    url.hash === ''
  );
}

/** The settings of `env`, with their defaults; a ConfigError naming every setting that is not allowed. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  let config: Config;
  const { data, setAs } = withAliases(env);
  try {
    config = envSchema<Config>({ schema: ConfigSchema, data, dotenv: false });
  } catch (error) {
    throw refusedSettings(error, env, setAs);
  }
  if (config.REGISTRY_PUBLIC_URL !== undefined && !isHttpUrl(config.REGISTRY_PUBLIC_URL)) {
    throw new ConfigError(
      `REGISTRY_PUBLIC_URL is '${config.REGISTRY_PUBLIC_URL}': it must be ${PUBLIC_URL_ALLOWED}; the SMP's links start with it.`,
      [{ setting: 'REGISTRY_PUBLIC_URL', allowed: PUBLIC_URL_ALLOWED }],
    );
  }
  if (config.SML_URL && !config.SML_SMP_ID) {
    throw new ConfigError(
      "SML_URL is set but SML_SMP_ID is not: the SML needs this SMP's identifier; set both, or neither.",
      [{ setting: 'SML_SMP_ID', allowed: 'the SMP identifier the SML knows this registry by' }],
    );
  }
  return config;
}
