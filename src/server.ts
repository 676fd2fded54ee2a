import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { SignedAnswerCache } from './smp/signed-answer-cache.js';
import { SmpKeyError } from './smp/keys.js';
import { baseUrlOf, deliverWelcome, prepare, welcome, welcomeFileNotice, type WelcomeDelivery } from './setup/first-start.js';
import { directoryOptionsOf, loadConfig, smlOptionsOf, type Config } from './config.js';
import { DataDirectoryInUseError, openDatabaseExclusively } from './db/data-dir-lock.js';
import { EMBEDDED_DURABILITY } from './db/embedded.js';
import { openStandbys } from './db/open.js';
import { ConnectionStringError } from './db/primary-host.js';
import { bufferedStandardOutput, loggerOptions } from './operations/logging.js';
import type { Database } from './db/database.js';
import { FirstAdminError } from './users/bootstrap.js';
import { buildManagementServer } from './operations/management.js';

const config = loadConfig();
if (cluster.isPrimary && config.REGISTRY_WORKERS > 1) await superviseWorkers(config);
else await serve(config);

/**
 * REGISTRY_WORKERS > 1: migrations and the first start run here once, then the workers share the API and
 * management ports (node:cluster). SIGTERM/SIGINT stop every worker gracefully; a worker that dies on its
 * own stops the rest, so the supervisor (systemd, Kubernetes) sees one failed service and restarts it.
 */
async function superviseWorkers(config: Config): Promise<void> {
  if (config.DATABASE_URL === undefined) {
    console.error(`REGISTRY_WORKERS=${config.REGISTRY_WORKERS} needs PostgreSQL (DATABASE_URL): the embedded database belongs to one process. Unset REGISTRY_WORKERS or set DATABASE_URL.`);
    process.exit(1);
  }
  const db = await openDatabaseExclusively(config, 'the registry server').catch(exitOn(DataDirectoryInUseError, ConnectionStringError));
  const setup = await prepareOrExit(db, config);
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
      console.error(`registry worker ${worker.process.pid} exited (${signal ?? code}); stopping the others`);
      stop(1);
    }
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(0));
  for (let i = 0; i < config.REGISTRY_WORKERS; i += 1) cluster.fork();
  const message = setup && welcome(setup, baseUrlOf(config.HOST, config.PORT));
  if (message) deliverWelcome(setup, message, delivery(config, console.log, (path) => console.log(welcomeFileNotice(path))));
}

function delivery(config: Config, print: WelcomeDelivery['print'], announce: WelcomeDelivery['announce']): WelcomeDelivery {
  const directory = config.DATABASE_URL === undefined ? config.REGISTRY_DATA_DIR : undefined;
  return { terminal: process.stdout.isTTY === true, directory, print, announce };
}

/** The first start; settings it refuses end the process with their message alone. */
function prepareOrExit(db: Database, config: Config) {
  return prepare(db, config).catch(async (error: unknown) => {
    await db.close();
    return exitOn(FirstAdminError)(error);
  });
}

async function serve(config: Config): Promise<void> {
  const standbys = standbysOrExit(config);
  const db = await openDatabaseExclusively(config, 'the registry server').catch(exitOn(DataDirectoryInUseError, ConnectionStringError));
  const closeDatabases = () => Promise.all([db, ...standbys.map((standby) => standby.db)].map((open) => open.close()));
  // A worker's primary has already made the first start.
  const setup = cluster.isWorker ? undefined : await prepareOrExit(db, config);
  const sml = smlOptionsOf(config);
  const logOutput = bufferedStandardOutput();
  const app = await buildApp({
    // The signed answers are kept: the change log tells the cache every committed change (app.ts).
    smp: { keySettings: config, publicUrl: config.REGISTRY_PUBLIC_URL, cache: new SignedAnswerCache() },
    db,
    logger: loggerOptions(config.LOG_LEVEL, logOutput),
    logReads: config.LOG_REQUESTS,
    bodyLimit: config.BODY_LIMIT,
    changePageMaxBytes: config.CHANGE_PAGE_MAX_BYTES,
    loginThrottle: { maxFailures: config.LOGIN_MAX_FAILURES, lockMs: config.LOGIN_LOCK_SECONDS * 1000 },
    hashing: { concurrency: config.LOGIN_CHECKS_AT_ONCE, perAddress: config.LOGIN_CHECKS_PER_ADDRESS },
    trustedProxies: config.REGISTRY_TRUSTED_PROXIES,
    sml,
    directory: directoryOptionsOf(config),
    requestTimeoutMs: config.REQUEST_TIMEOUT_SECONDS * 1000,
    maxRequestsPerAddress: config.MAX_REQUESTS_PER_ADDRESS,
    maxFeedPollsPerUser: config.MAX_FEED_POLLS_PER_USER,
    standbys,
    replication: { maxLagMs: config.DATABASE_READ_MAX_LAG_SECONDS * 1000 },
  }).catch(async (error: unknown) => {
    await closeDatabases();
    return exitOn(SmpKeyError)(error);
  });
  // Warnings only: probes and scrapes every few seconds would drown the API's request log.
  const managementLog = app.log.child({ server: 'management' }, { level: 'warn' });
  const management = buildManagementServer({ db, metrics: app.metrics, logger: managementLog, replication: app.replication });

  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    management.drain();
    // Stops accepting connections and waits for the requests in flight; then the database goes.
    await app.close();
    await management.server.close();
    await closeDatabases();
  });

  const address = await app.listen({ port: config.PORT, host: config.HOST });
  app.log.info({ database: db.kind }, `registry listening on ${address}`);
  if (db.kind === 'embedded') app.log.warn(EMBEDDED_DURABILITY);
  if (sml) app.log.info({ sml: sml.url, smpId: sml.smpId }, 'participants are delivered to the SML');
  else app.log.warn('no SML configured (SML_URL): nothing is registered with the SML; changes wait in the change log');
  if (!config.DIRECTORY_URL) app.log.info('no Peppol Directory configured (DIRECTORY_URL): nothing is pushed to it');
  const managementAddress = await management.server.listen({ port: config.MANAGEMENT_PORT, host: config.MANAGEMENT_HOST });
  app.log.info(`health and metrics on ${managementAddress}/health/ready and ${managementAddress}/metrics`);
  const message = setup && welcome(setup, baseUrlOf(config.HOST, (app.server.address() as AddressInfo).port));
  // Through the log's buffer, so it follows the lines logged before it.
  if (message) {
    deliverWelcome(setup, message, delivery(config, (text) => logOutput.write(`${text}\n`), (file) => app.log.warn({ file }, welcomeFileNotice(file))));
  }
}

/** The hot standbys of DATABASE_READ_URLS (no connection yet); settings it refuses end the process with their message alone. */
function standbysOrExit(config: Config) {
  try {
    return openStandbys(config);
  } catch (error) {
    return exitOn(ConnectionStringError)(error);
  }
}

/**
 * A catch handler that ends the process with the error's message alone (exit 1, no stack trace) when it is of a `kind`:
 * what the operator must change before a start (a setting, a file, another process on the data directory), not a
 * fault of the program. Any other error goes on as it was.
 */
function exitOn(...kinds: Array<abstract new (...args: never[]) => Error>): (error: unknown) => never {
  return (error) => {
    if (!(error instanceof Error) || !kinds.some((kind) => error instanceof kind)) throw error;
    console.error(error.message);
    process.exit(1);
  };
}
