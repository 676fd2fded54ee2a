import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import closeWithGrace from 'close-with-grace';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { SignedAnswerCache } from './smp/signed-answer-cache.js';
import { loadSmpKeys, SmpKeyError, type SmpKeys } from './smp/keys.js';
import { KeyFileError, readPrivateKeyFile } from './core/private-key-file.js';
import {
  baseUrlOf,
  deliverWelcome,
  prepare,
  welcome,
  welcomeFileNotice,
  type WelcomeDelivery,
} from './setup/first-start.js';
import { shownUrl } from './core/urls.js';
import {
  ConfigError,
  directoryOptionsOf,
  loadConfig,
  nationalRegisterOptionsOf,
  signInOptionsOf,
  smlOptionsOf,
  type Config,
} from './config.js';
import { DataDirectoryInUseError, openDatabaseExclusively } from './db/data-dir-lock.js';
import { DatabaseStartError, openStandbys } from './db/open.js';
import { EMBEDDED_DURABILITY } from './db/embedded.js';
import { ConnectionStringError } from './db/connection-string.js';
import {
  bufferedStandardOutput,
  loggerOptions,
  processLogger,
  startFailureLog,
  type LogOutput,
} from './operations/logging.js';
import type { Database } from './db/database.js';
import { FirstAdminError } from './users/bootstrap.js';
import { checkReferenceData, ReferenceDataMissingError } from './setup/starter-catalogue.js';
import { buildManagementServer } from './operations/management.js';
import { buildInfo } from './status/build-info.js';

/** A port or address the server cannot listen on. */
class ListenError extends Error {}

/** What the operator must change before a start (a setting, a file, the database, a port): its message is all there is to say. */
const OPERATOR_ERRORS = [
  ConfigError,
  ConnectionStringError,
  DataDirectoryInUseError,
  DatabaseStartError,
  SmpKeyError,
  KeyFileError,
  FirstAdminError,
  ListenError,
  ReferenceDataMissingError,
];

/** How long the requests in flight at SIGTERM have to finish: the change feed's waiting polls are answered at once. */
const SHUTDOWN_GRACE_MS = 10_000;

async function start(): Promise<void> {
  const config = loadConfig();
  if (cluster.isPrimary && config.REGISTRY_WORKERS > 1) await superviseWorkers(config);
  else await serve(config);
}

/**
 * A start that failed is one JSON line on standard error and exit status 1: what is wrong and what would do, no stack
 * trace. A fault of the program (no error the operator can fix) exits 2, its stack in the line's `err`.
 */
function failedToStart(error: unknown): never {
  const expected = OPERATOR_ERRORS.some((kind) => error instanceof kind);
  const log = startFailureLog();
  if (expected)
    log.fatal(
      { ...(error instanceof ConfigError && error.problems.length > 0 ? { settings: error.problems } : {}) },
      (error as Error).message,
    );
  else
    log.fatal(
      { err: error },
      `the registry failed to start: ${error instanceof Error ? error.message : String(error)}`,
    );
  process.exit(expected ? 1 : 2);
}

/**
 * REGISTRY_WORKERS > 1: migrations and the first start run here once, then the workers share the API and
 * management ports (node:cluster). SIGTERM/SIGINT stop every worker gracefully; a worker that dies on its
 * own stops the rest, so the supervisor (systemd, Kubernetes) sees one failed service and restarts it.
 */
async function superviseWorkers(config: Config): Promise<void> {
  if (config.DATABASE_URL === undefined) {
    throw new ConfigError(
      `REGISTRY_WORKERS=${config.REGISTRY_WORKERS} needs PostgreSQL (DATABASE_URL): the embedded database belongs to one process. Unset REGISTRY_WORKERS or set DATABASE_URL.`,
      [{ setting: 'REGISTRY_WORKERS', allowed: '1 without DATABASE_URL' }],
    );
  }
  const log = processLogger(config.LOG_LEVEL, bufferedStandardOutput());
  // Each worker reads them again, and says what it found.
  await keyFilesOf(config, { info: () => undefined, warn: () => undefined });
  await checkReferenceData();
  const db = await openDatabaseExclusively(config, 'the registry server', { onWait: waitingFor(log) });
  const setup = await prepareOrClose(db, config);
  await db.close();
  let stopping = false;
  let exitCode = 0;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping) {
      log.error(
        { worker: worker.process.pid, code, signal },
        `registry worker ${worker.process.pid} exited (${signal ?? code}); stopping the others`,
      );
      stop(1);
    }
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(0));
  for (let i = 0; i < config.REGISTRY_WORKERS; i += 1) cluster.fork();
  const message = setup && welcome(setup, baseUrlOf(config.HOST, config.PORT));
  if (message)
    deliverWelcome(
      setup,
      message,
      delivery(config, console.log, (path) => console.log(welcomeFileNotice(path))),
    );
}

function delivery(
  config: Config,
  print: WelcomeDelivery['print'],
  announce: WelcomeDelivery['announce'],
): WelcomeDelivery {
  const directory = config.DATABASE_URL === undefined ? config.REGISTRY_DATA_DIR : undefined;
  return { terminal: process.stdout.isTTY === true, directory, print, announce };
}

/** The first start; the database is closed when it fails. */
function prepareOrClose(db: Database, config: Config) {
  return prepare(db, config).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
}

/** Said while a start waits for PostgreSQL (DATABASE_WAIT_SECONDS). */
function waitingFor(log: FastifyBaseLogger) {
  return (reason: string, remainingSeconds: number) =>
    log.warn(
      { reason, remainingSeconds },
      `the database does not answer yet (${reason}); waiting for it up to ${remainingSeconds} s more (DATABASE_WAIT_SECONDS)`,
    );
}

/**
 * The SMP pairs and the SML client key the operator named, read before the database opens: a file they refuse stops
 * the start at once, in one line, not after the embedded database's boot and the migrations (or in every worker).
 */
async function keyFilesOf(config: Config, log: Parameters<typeof loadSmpKeys>[1]): Promise<SmpKeys | undefined> {
  const keys = await loadSmpKeys(config, log);
  if (config.SML_CLIENT_CERT_FILE && config.SML_CLIENT_KEY_FILE)
    readPrivateKeyFile('SML_CLIENT_KEY_FILE', config.SML_CLIENT_KEY_FILE);
  return keys;
}

async function serve(config: Config): Promise<void> {
  const logOutput = bufferedStandardOutput();
  const log = processLogger(config.LOG_LEVEL, logOutput);
  const smpKeys = await keyFilesOf(config, log);
  await checkReferenceData();
  const standbys = openStandbys(config);
  const db = await openDatabaseExclusively(config, 'the registry server', { onWait: waitingFor(log) });
  const closeDatabases = () => Promise.all([db, ...standbys.map((standby) => standby.db)].map((open) => open.close()));
  // A worker's primary has already made the first start.
  const setup = cluster.isWorker
    ? undefined
    : await prepare(db, config).catch(async (error: unknown) => {
        await closeDatabases();
        throw error;
      });
  const sml = smlOptionsOf(config);
  const app = await buildApp({
    // The signed answers are kept: the change log tells the cache every committed change (app.ts).
    smp: { keys: smpKeys, publicUrl: config.REGISTRY_PUBLIC_URL, cache: new SignedAnswerCache() },
    db,
    logger: loggerOptions(config.LOG_LEVEL, logOutput),
    logReads: config.LOG_REQUESTS,
    participantSearchInMemory: config.PARTICIPANT_SEARCH_IN_MEMORY,
    identifierValueChecks: config.IDENTIFIER_VALUE_CHECKS,
    bodyLimit: config.BODY_LIMIT,
    changePageMaxBytes: config.CHANGE_PAGE_MAX_BYTES,
    ...signInOptionsOf(config),
    trustedProxies: config.REGISTRY_TRUSTED_PROXIES,
    sml,
    directory: directoryOptionsOf(config),
    smlListSize: config.SML_LIST_SIZE,
    callsAtOnce: { sml: config.SML_CALLS_AT_ONCE, directory: config.DIRECTORY_CALLS_AT_ONCE },
    nationalRegister: nationalRegisterOptionsOf(config),
    requestTimeoutMs: config.REQUEST_TIMEOUT_SECONDS * 1000,
    maxRequestsPerAddress: config.MAX_REQUESTS_PER_ADDRESS,
    publicMaxAgeSeconds: config.PUBLIC_MAX_AGE_SECONDS,
    maxFeedPollsPerUser: config.MAX_FEED_POLLS_PER_USER,
    certificateWarningDays: config.CERTIFICATE_WARNING_DAYS,
    standbys,
    replication: { maxLagMs: config.DATABASE_READ_MAX_LAG_SECONDS * 1000 },
  }).catch(async (error: unknown) => {
    await closeDatabases();
    throw error;
  });
  // Warnings only: probes and scrapes every few seconds would drown the API's request log.
  const managementLog = app.log.child({ server: 'management' }, { level: 'warn' });
  const management = buildManagementServer({
    db,
    metrics: app.metrics,
    logger: managementLog,
    replication: app.replication,
    version: buildInfo().version,
  });

  const stop = async () => {
    management.drain();
    // Stops accepting connections, answers the change feed's waiting polls at once and the requests in flight; then the database goes.
    await app.close();
    await management.server.close();
    await closeDatabases();
  };
  closeWithGrace(
    {
      delay: SHUTDOWN_GRACE_MS,
      logger: { error: (message: unknown) => app.log.error(message) },
      onTimeout: (delay) =>
        app.log.error(
          { delayMs: delay },
          `shutdown took longer than ${delay} ms: exiting with requests still in flight`,
        ),
    },
    async ({ signal, err }) => {
      if (err) app.log.error({ err }, 'shutting down after an error');
      else app.log.info({ signal }, 'shutting down');
      await stop();
    },
  );

  // The management port first: its default is every instance's, so a second instance on a host stops at it before its
  // API has listened (or said so).
  const managementAddress = await listenOrStop(
    management.server,
    { port: config.MANAGEMENT_PORT, host: config.MANAGEMENT_HOST },
    ['MANAGEMENT_PORT', 'MANAGEMENT_HOST'],
    stop,
  );
  const address = await listenOrStop(app, { port: config.PORT, host: config.HOST }, ['PORT', 'HOST'], stop);
  app.log.info({ database: db.kind, version: buildInfo().version }, `registry listening on ${address}`);
  if (db.kind === 'embedded') app.log.warn(EMBEDDED_DURABILITY);
  if (sml) app.log.info({ sml: sml.url, smpId: sml.smpId }, 'participants are delivered to the SML');
  else app.log.warn('no SML configured (SML_URL): nothing is registered with the SML; changes wait in the change log');
  if (config.NATIONAL_REGISTER_URL)
    app.log.info(
      { nationalRegister: shownUrl(config.NATIONAL_REGISTER_URL) },
      'new Norwegian participants are checked against Enhetsregisteret',
    );
  if (!config.DIRECTORY_URL) app.log.info('no Peppol Directory configured (DIRECTORY_URL): nothing is pushed to it');
  app.log.info(`health and metrics on ${managementAddress}/health/ready and ${managementAddress}/metrics`);
  welcomeAfterStart(setup, config, app, logOutput);
}

/** Listens, or stops what started and says which setting to change: a port in use or not allowed, an address not this machine's. */
async function listenOrStop(
  server: FastifyInstance,
  at: { port: number; host: string },
  [portSetting, hostSetting]: [string, string],
  stop: () => Promise<void>,
): Promise<string> {
  try {
    return await server.listen(at);
  } catch (error) {
    await stop();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new ListenError(
        `${portSetting} ${at.port} is in use on ${at.host} by another process: stop it, or set ${portSetting} to a free port (0 to 65535; 0 takes any free one).`,
      );
    if (code === 'EACCES')
      throw new ListenError(
        `${portSetting} ${at.port} needs privileges this user lacks: set ${portSetting} to a port from 1024 to 65535 (a proxy can answer on 80 and 443).`,
      );
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      throw new ListenError(
        `${hostSetting} ${at.host} is not an address of this machine (${code}): set it to one of its addresses, 0.0.0.0 (all) or 127.0.0.1.`,
      );
    throw error;
  }
}

/** The first start's message, through the log's buffer so it follows the lines logged before it. */
function welcomeAfterStart(
  setup: Awaited<ReturnType<typeof prepare>> | undefined,
  config: Config,
  app: FastifyInstance,
  logOutput: LogOutput,
): void {
  const message = setup && welcome(setup, baseUrlOf(config.HOST, (app.server.address() as AddressInfo).port));
  if (message) {
    deliverWelcome(
      setup,
      message,
      delivery(
        config,
        (text) => logOutput.write(`${text}\n`),
        (file) => app.log.warn({ file }, welcomeFileNotice(file)),
      ),
    );
  }
}

await start().catch(failedToStart);
