import type { AddressInfo } from 'node:net';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { SignedAnswerCache } from './smp/cache.js';
import { baseUrlOf, prepare, welcome } from './setup/first-start.js';
import { directoryOptionsOf, loadConfig, smlOptionsOf } from './config.js';
import { exitIfInUse, openDatabaseExclusively } from './db/data-dir-lock.js';
import { EMBEDDED_DURABILITY } from './db/embedded.js';
import { loggerOptions } from './operations/logging.js';
import { buildManagementServer } from './operations/management.js';

const config = loadConfig();
const db = await openDatabaseExclusively(config, 'the registry server').catch(exitIfInUse);
const setup = await prepare(db, config);
const sml = smlOptionsOf(config);
const app = await buildApp({
  // The signed answers are kept: the change log tells the cache every committed change (app.ts).
  smp: { keySettings: config, publicUrl: config.REGISTRY_PUBLIC_URL, cache: new SignedAnswerCache() },
  db,
  logger: loggerOptions(config.LOG_LEVEL),
  bodyLimit: config.BODY_LIMIT,
  loginThrottle: { maxFailures: config.LOGIN_MAX_FAILURES, lockMs: config.LOGIN_LOCK_SECONDS * 1000 },
  sml,
  directory: directoryOptionsOf(config),
});
// Warnings only: probes and scrapes every few seconds would drown the API's request log.
const managementLog = app.log.child({ server: 'management' }, { level: 'warn' });
const management = buildManagementServer({ db, metrics: app.metrics, logger: managementLog });

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal }, 'shutting down');
  management.drain();
  // Stops accepting connections and waits for the requests in flight; then the database goes.
  await app.close();
  await management.server.close();
  await db.close();
});

const address = await app.listen({ port: config.PORT, host: config.HOST });
app.log.info({ database: db.kind }, `registry listening on ${address}`);
if (db.kind === 'embedded') app.log.warn(EMBEDDED_DURABILITY);
if (sml) app.log.info({ sml: sml.url, smpId: sml.smpId }, 'participants are delivered to the SML');
else app.log.warn('no SML configured (SML_URL): nothing is registered with the SML; changes wait in the change log');
if (!config.DIRECTORY_URL) app.log.info('no Peppol Directory configured (DIRECTORY_URL): nothing is pushed to it');
const managementAddress = await management.server.listen({ port: config.MANAGEMENT_PORT, host: config.MANAGEMENT_HOST });
app.log.info(`health and metrics on ${managementAddress}/health/ready and ${managementAddress}/metrics`);
const message = welcome(setup, baseUrlOf(config.HOST, (app.server.address() as AddressInfo).port));
if (message) console.log(message);
