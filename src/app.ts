import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { counted } from './core/plural.js';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Server } from 'node:http';
import type { Registry } from 'prom-client';
import { catchingUpAfterWrites, changeSignal, type ChangeSignal } from './db/change-signal.js';
import { Replication, type ReplicationOptions, type StandbyDatabase } from './db/replication.js';
import { following, standbyView, viewsByRequest, type DatabaseView } from './held-state.js';
import { HeldParticipants } from './participants/held-participants.js';
import readRouting from './http/read-routing.js';
import type { Database } from './db/database.js';
import { CatalogueCache } from './catalogue-cache/catalogue-cache.js';
import accessPointProviders from './access-point-providers/routes.js';
import accessPoints from './access-points/routes.js';
import capabilities from './capabilities/routes.js';
import catalogueRoutes from './code-lists/routes.js';
import { removalCounts, REMOVALS_DEFAULT_DAYS } from './code-lists/removals.js';
import { auditRoutes, feedRoutes } from './changes/routes.js';
import { DEFAULT_PAGE_MAX_BYTES } from './changes/schemas.js';
import { expirySweeper } from './participants/expiry.js';
import { removalAnnouncer } from './code-lists/removal-announcer.js';
import { deliveryStatus } from './network/delivery-status.js';
import { outboxDelivery, type DeliveryOptions, type DeliveryTarget } from './network/outbox.js';
import { directoryTarget, smlTarget } from './network/targets.js';
import { directoryClient, type DirectoryOptions } from './network/directory-client.js';
import { smlClient, type SmlClient, type SmlOptions } from './network/sml-client.js';
import networkRoutes from './network/routes.js';
import documentTypes from './document-types/routes.js';
import authentication from './http/auth.js';
import { clientErrors } from './http/client-errors.js';
import errorHandler, { routerErrors } from './http/error-handler.js';
import untrustedForwarding, { proxyTrust } from './http/forwarded.js';
import mediaTypes from './http/media-types.js';
import organizations, { ORGANIZATIONS_PREFIX } from './organizations/routes.js';
import { organizationEarlyRoutes } from './organizations/early-answers.js';
import participants, { identifierFaults } from './participants/routes.js';
import { checkUncheckedIdentifiers } from './participants/identifier-faults.js';
import mlsReceivers from './participants/mls-receiver-routes.js';
import removedIcdParticipants from './participants/removed-icd-routes.js';
import requestHygiene from './http/request-hygiene.js';
import inFlightLimit from './http/in-flight-limit.js';
import publicCaching, { publicCacheControl } from './http/public-caching.js';
import securityHeaders from './http/security-headers.js';
import { validatorCompiler } from './http/validators.js';
import openapi from './openapi/plugin.js';
import { MAX_PATH_PARAMETER_LENGTH, NO_EARLY_ANSWERS, serverAnsweringEarly } from './http/early-answers/server.js';
import requestMetrics, {
  createMetrics,
  requestRecorder,
  securityEventCounter,
  watchRegisterFlags,
  watchSearchIndex,
} from './operations/metrics.js';
import { RequestLogController, requestLoggerWhenUsed } from './operations/logging.js';
import requestId, { requestIdOf } from './operations/request-id.js';
import { earlyAnswers } from './http/early-answers/dispatcher.js';
import processes from './processes/routes.js';
import { noticesOfRemovalDate } from './code-lists/removal-notices.js';
import serviceProviders from './service-providers/routes.js';
import transportProfiles from './transport-profiles/routes.js';
import { credentialVerifier, type Credentials } from './users/credentials.js';
import type { HashingQueueOptions } from './users/hashing-queue.js';
import type { SignInThrottleOptions } from './sign-in-locks/sign-in-throttle.js';
import users from './users/routes.js';
import signInLocks from './sign-in-locks/routes.js';
import { securityEventLog } from './http/security-events.js';
import sessions from './sessions/routes.js';
import { sessionVerifier } from './sessions/sessions.js';
import webConsole, { type ConsoleOptions } from './web/plugin.js';
import type { SignedAnswerCache } from './smp/signed-answer-cache.js';
import { readIcdCountries } from './smp/countries.js';
import { networkClientCertificate, type SmpKeys } from './smp/keys.js';
import { SmpPublisher } from './smp/publisher.js';
import { smpEarlyRoutes } from './smp/early-answers.js';
import smp from './smp/routes.js';
import { fixedClientCertificate, watchedCertificates, type CertificateSources } from './status/certificates.js';
import { expiryWarnings } from './status/expiry-warnings.js';
import statusRoutes from './status/routes.js';
import { nationalRegisterOf, type NationalRegisterSettings } from './national-register/register-check.js';
import nationalRegisterRoutes from './national-register/routes.js';
import { flagCounts } from './national-register/checks.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: Database;
    /** Every committed change, from the change log: caches subscribe here (`app.changes.subscribe`). */
    changes: ChangeSignal;
    credentials: Credentials;
    /** The Prometheus registry the management server publishes. */
    metrics: Registry;
    /** The SML (BDMSL) client; undefined without `SML_URL`. */
    sml: SmlClient | undefined;
    /** The hot standbys reads come from; undefined without any. */
    replication: Replication | undefined;
  }
}

export interface AppOptions {
  db: Database;
  logger?: FastifyServerOptions['logger'];
  /** `false`: reads answered below 500 write no request lines (LOG_REQUESTS); default true. */
  logReads?: boolean;
  bodyLimit?: number;
  signInThrottle?: SignInThrottleOptions;
  /** The turns of the password checks: at once, and per client address (see hashing-queue.ts). */
  hashing?: HashingQueueOptions;
  /** REGISTRY_TRUSTED_PROXIES: addresses and CIDRs whose X-Forwarded-For gives `request.ip`; none by default. */
  trustedProxies?: string;
  /** The browser console; `false` serves none. */
  console?: ConsoleOptions | false;
  smp?: SmpOptions;
  /** `false`: the change signal is not started (describing the API without a database). */
  followChanges?: boolean;
  /** `false`: participant searches are answered by the database alone (PARTICIPANT_SEARCH_IN_MEMORY); default true. */
  participantSearchInMemory?: boolean;
  /** Where participants are registered (BDMSL); none: nothing is sent. */
  sml?: SmlOptions;
  /** The Peppol Directory participants are pushed to; none: nothing is sent. */
  directory?: DirectoryOptions;
  /** Lease, retry and polling of both deliveries. */
  delivery?: DeliveryOptions;
  /** Calls in flight at once to each peer, by target name (SML_CALLS_AT_ONCE, DIRECTORY_CALLS_AT_ONCE); else `delivery`'s. */
  callsAtOnce?: Readonly<Record<string, number>>;
  /** The organizations one CreateList or DeleteList carries at most (SML_LIST_SIZE). */
  smlListSize?: number;
  /** Enhetsregisteret (NATIONAL_REGISTER_URL): new Norwegian participants are checked against it, the others re-checked. */
  nationalRegister?: NationalRegisterSettings;
  /** A request must arrive whole (headers and body) within this many milliseconds, else 408; default 30 s. */
  requestTimeoutMs?: number;
  /** Requests one client address may have in flight; beyond it 429 at once. Default 64. */
  maxRequestsPerAddress?: number;
  /** PUBLIC_MAX_AGE_SECONDS: how long a cache in front may give a public read's answer without asking; default 0 (it asks each time). */
  publicMaxAgeSeconds?: number;
  /** The change feed's `wait` polls one user may hold; beyond it 429 at once. Default 10. */
  maxFeedPollsPerUser?: number;
  /** The most JSON one page of the audit or the change feed carries; default DEFAULT_PAGE_MAX_BYTES. */
  changePageMaxBytes?: number;
  /** CERTIFICATE_WARNING_DAYS: certificates expiring within as many days are logged (at start, then daily) and listed in the status; default 30. */
  certificateWarningDays?: number;
  /** IDENTIFIER_VALUE_CHECKS: `false` stores a new organization identifier that breaks its scheme's rule (listed with its fault); default true. */
  identifierValueChecks?: boolean;
  /** Hot standbys of `db` (DATABASE_READ_URLS), opened and closed by the caller: the standby routes read from them. */
  standbys?: readonly StandbyDatabase[];
  replication?: Pick<ReplicationOptions, 'maxLagMs' | 'checkMs'>;
}

export interface SmpOptions {
  /** The SMP's pair (and the next from its instant); without one the signed SMP answers are 503. */
  keys?: SmpKeys;
  /** REGISTRY_PUBLIC_URL, without a trailing slash. */
  publicUrl?: string;
  /** Only where every committed change reaches its `onChange` (the change log). */
  cache?: SignedAnswerCache;
}

/**
 * Each view's participant search loads once the application is ready (after the change signal has started, so that
 * no change committed during the load goes unheard), in the background: the database answers searches meanwhile.
 */
function loadSearchIndexes(app: FastifyInstance, views: ReadonlySet<DatabaseView>) {
  app.addHook('onReady', () => {
    for (const view of views) void view.heldParticipants.load();
  });
  app.addHook('onClose', () => {
    for (const view of views) view.heldParticipants.stop();
  });
}

/** The registry as a Fastify application: shared HTTP behaviour first, then one plugin per resource. */
export async function buildApp(options: AppOptions) {
  const startedAt = Date.now();
  // Set once the SMP publisher exists (it needs the app's logger) if it keeps answers; cleared on close, when Fastify
  // answers everything.
  let earlyAnswer = NO_EARLY_ANSWERS;
  const trust = proxyTrust(options.trustedProxies);
  const app = Fastify({
    trustProxy: trust,
    serverFactory: serverAnsweringEarly(() => earlyAnswer),
    logger: options.logger ?? false,
    logController: new RequestLogController(options.logReads),
    childLoggerFactory: requestLoggerWhenUsed,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    genReqId: requestIdOf,
    // During shutdown, requests that still reach the service are answered (with Connection: close), not
    // refused with the framework's own 503 body.
    return503OnClosing: false,
    // Room for any qualified identifier, percent-encoded; longer ones get a 400 in the common error body.
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    frameworkErrors: routerErrors,
    // What Node's HTTP parser refuses (431, 414, 400, 408) in the common error body too.
    clientErrorHandler: clientErrors,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);

  const onListenerError = (error: unknown) => app.log.error({ err: error }, 'a change listener failed');
  const changes = changeSignal(options.db, { onListenerError });
  const onSearchIndexError = (error: unknown) =>
    app.log.error(
      { err: error },
      'the participant search in memory could not be loaded or kept; the database answers searches until it is loaded again',
    );
  const primary = {
    db: catchingUpAfterWrites(options.db, changes),
    catalogue: following(new CatalogueCache(options.db), changes),
    changes,
    heldParticipants: following(new HeldParticipants(options.db, onSearchIndexError), changes),
  };
  // With hot standbys, the standby routes read through `reads`, and the decorators stand for the view of the request.
  const replication = options.standbys?.length
    ? new Replication(primary.db, changes, options.standbys, {
        ...replicationLog(app),
        onListenerError,
        ...options.replication,
      })
    : undefined;
  const reads = replication ? standbyView(replication, onSearchIndexError) : primary;
  const views = replication && viewsByRequest(primary, reads, replication);
  const served = views?.served ?? primary;
  app.decorate('changes', served.changes);
  app.decorate('db', served.db);
  app.decorate('catalogue', served.catalogue);
  app.decorate('heldParticipants', served.heldParticipants);
  app.decorate('replication', replication);
  const smpKeys = options.smp?.keys;
  const certificates: CertificateSources = {
    keys: smpKeys,
    clientCertificate: fixedClientCertificate(options.sml ?? options.directory),
    catalogue: primary.catalogue,
  };
  app.decorate(
    'metrics',
    createMetrics(
      options.db,
      () => openConnections(app.server),
      () => deliveryStatus(options.db),
      () => watchedCertificates(certificates),
      replication && (() => replication.status()),
      () => removalCounts(options.db, null, REMOVALS_DEFAULT_DAYS),
    ),
  );
  watchSearchIndex(app.metrics, primary.heldParticipants);
  app.decorate('securityEvents', securityEventLog(securityEventCounter(app.metrics)));
  // Sign-in reads the primary while it answers (a standby through its loss); its locks are written on the primary.
  const signIn = replication?.primaryFirst ?? primary.db;
  app.decorate(
    'credentials',
    credentialVerifier(signIn, {
      throttle: options.signInThrottle,
      hashing: options.hashing,
      events: app.securityEvents,
      onError: (error) =>
        app.log.error(
          { err: error },
          'a sign-in lock could not be stored or read; what this process holds still refuses',
        ),
    }),
  );
  changes.subscribe((notice) => app.credentials.onChange(notice));
  changes.onReset(() => app.credentials.forgetAll());
  // Every instance refuses the pairs locked anywhere: those in force at the start, then each as it is stored.
  if (options.followChanges !== false) {
    let stopFollowingLocks: (() => Promise<void>) | undefined;
    app.addHook('onReady', async () => void (stopFollowingLocks = await app.credentials.followLocks()));
    app.addHook('onClose', () => stopFollowingLocks?.());
  }
  const smpCache = options.smp?.cache;
  if (smpCache) {
    reads.changes.subscribe((notice) => smpCache.onChange(notice));
    reads.changes.onReset(() => smpCache.clear());
  }
  if (options.followChanges !== false) {
    app.addHook('onReady', () => changes.start());
    if (replication) app.addHook('onReady', () => replication.start());
    if (options.participantSearchInMemory !== false) loadSearchIndexes(app, new Set([primary, reads]));
  }
  if (replication) app.addHook('onClose', () => replication.stop());
  app.addHook('onClose', () => changes.stop());
  if (options.followChanges !== false) checkIdentifiersAfterStart(app, options.db);
  if (options.followChanges !== false) {
    const expiry = expirySweeper(app.db, (error) =>
      app.log.error({ err: error }, 'expiring participants failed; retried at the next sweep'),
    );
    app.addHook('onReady', () => expiry.start());
    app.addHook('onClose', () => expiry.stop());
    const removals = removalAnnouncer(app.db, changes, (error) =>
      app.log.error({ err: error }, 'announcing a code-list removal failed; retried in a minute'),
    );
    app.addHook('onReady', () => removals.start());
    app.addHook('onClose', () => removals.stop());
  }
  const clientCertificate = networkClientCertificate(smpKeys);
  const sml = options.sml ? smlClient({ ...clientCertificate, ...options.sml }) : undefined;
  app.decorate('sml', sml);
  const targets: DeliveryTarget[] = [
    ...(sml ? [smlTarget(sml, options.smlListSize)] : []),
    ...(options.directory
      ? [
          directoryTarget(
            directoryClient({ ...clientCertificate, ...options.directory }),
            options.sml ? 'sml' : undefined,
          ),
        ]
      : []),
  ];
  for (const target of targets) {
    const onError = (error: unknown) =>
      app.log.warn({ err: error, target: target.name }, 'delivery failed; it will be retried');
    const concurrency = options.callsAtOnce?.[target.name] ?? options.delivery?.concurrency;
    const delivery = outboxDelivery(options.db, changes, target, { onError, ...options.delivery, concurrency });
    app.addHook('onReady', () => delivery.start());
    app.addHook('onClose', () => delivery.stop());
  }

  wireNationalRegister(app, options);

  const warningDays = options.certificateWarningDays ?? 30;
  if (options.followChanges !== false) {
    const warnings = expiryWarnings(certificates, warningDays, app.log);
    app.addHook('onReady', () => warnings.start());
    app.addHook('onClose', () => warnings.stop());
  }
  await app.register(requestId);
  await app.register(requestMetrics, { registry: app.metrics });
  await app.register(securityHeaders);
  const cacheControl = publicCacheControl(options.publicMaxAgeSeconds ?? 0);
  await app.register(publicCaching, { cacheControl });
  await app.register(untrustedForwarding, { trust });
  await app.register(inFlightLimit, { maxPerAddress: options.maxRequestsPerAddress ?? 64 });
  await app.register(errorHandler);
  await app.register(authentication, { credentials: app.credentials, sessions: sessionVerifier(signIn) });
  await app.register(mediaTypes);
  await app.register(requestHygiene);
  if (views) await app.register(readRouting, { runReads: views.runReads });
  // Before the resources: the description is built from the routes registered after it.
  await app.register(openapi);

  await app.register(processes, { prefix: '/rest/api/processes', aroundWrite: noticesOfRemovalDate });
  await app.register(participants, {
    prefix: '/rest/api/participants',
    valueChecks: options.identifierValueChecks === false ? 'record' : 'refuse',
  });
  await app.register(identifierFaults, { prefix: '/rest/api/identifier-faults' });
  await app.register(mlsReceivers, { prefix: '/rest/api/mls-receivers' });
  await app.register(removedIcdParticipants, { prefix: '/rest/api/removed-icd-participants' });
  await app.register(organizations, { prefix: ORGANIZATIONS_PREFIX });
  await app.register(documentTypes, { prefix: '/rest/api/document-types', aroundWrite: noticesOfRemovalDate });
  await app.register(accessPoints, { prefix: '/rest/api/accessPoints' });
  await app.register(accessPointProviders, { prefix: '/rest/api/access-point-providers' });
  await app.register(serviceProviders, { prefix: '/rest/api/service-providers' });
  await app.register(capabilities, { prefix: '/rest/api/capabilities' });
  await app.register(transportProfiles, { prefix: '/rest/api/transport-profiles' });
  await app.register(users, { prefix: '/rest/api/users' });
  await app.register(signInLocks, { prefix: '/rest/api/sign-in-locks' });
  await app.register(sessions, { prefix: '/rest/api/sessions' });
  await app.register(catalogueRoutes, { prefix: '/rest/api/catalogue' });
  await app.register(nationalRegisterRoutes, { prefix: '/rest/api/national-register' });
  const pageMaxBytes = options.changePageMaxBytes ?? DEFAULT_PAGE_MAX_BYTES;
  await app.register(auditRoutes, { prefix: '/rest/api', pageMaxBytes });
  await app.register(networkRoutes, { prefix: '/rest/api' });
  await app.register(feedRoutes, {
    prefix: '/rest/api',
    maxPollsPerUser: options.maxFeedPollsPerUser ?? 10,
    pageMaxBytes,
  });
  await app.register(statusRoutes, {
    prefix: '/rest/api',
    sources: certificates,
    sml: options.sml,
    directory: options.directory,
    publicUrl: options.smp?.publicUrl,
    warningDays,
    startedAt,
    nationalRegisterUrl: options.nationalRegister?.url,
  });
  if (options.console !== false) await app.register(webConsole, options.console ?? {});
  const smpOptions = await smpRoutesOptions(reads, options.smp ?? {}, smpKeys, app.log);
  app.addHook('onClose', () => smpOptions.publisher.close());
  await app.register(smp, smpOptions);
  earlyAnswer = earlyAnswers(
    [...smpEarlyRoutes(smpOptions.publisher), ...organizationEarlyRoutes(reads)],
    requestRecorder(app.metrics),
    requestIdOf,
    cacheControl,
  );
  app.addHook('preClose', (done) => {
    earlyAnswer = NO_EARLY_ANSWERS;
    done();
  });
  return app;
}

export type App = Awaited<ReturnType<typeof buildApp>>;

/** The check of new Norwegian participants (none without the register), its re-check, and the metric of its flags. */
function wireNationalRegister(app: FastifyInstance, options: AppOptions) {
  const settings = options.nationalRegister;
  const onError = (error: unknown) =>
    app.log.warn({ err: error }, 'a re-check against the national register failed; it goes on at the next step');
  const register = settings && nationalRegisterOf(options.db, settings, onError);
  app.decorate('organizationCheck', register?.check);
  if (!register) return;
  watchRegisterFlags(app.metrics, () => flagCounts(options.db));
  if (options.followChanges === false) return;
  app.addHook('onReady', () => register.recheck.start());
  app.addHook('onClose', () => register.recheck.stop());
}

async function smpRoutesOptions(
  { db, catalogue, heldParticipants }: Pick<DatabaseView, 'db' | 'catalogue' | 'heldParticipants'>,
  options: SmpOptions,
  keys: SmpKeys | undefined,
  log: FastifyBaseLogger,
) {
  const countries = await readIcdCountries().catch((error: Error) => {
    log.warn(`business cards answer 503: ${error.message}`);
    return undefined;
  });
  const publisher = new SmpPublisher({
    db,
    catalogue,
    participants: heldParticipants,
    keys,
    countries,
    cache: options.cache,
    publicUrl: options.publicUrl?.replace(/\/+$/, ''),
  });
  return { publisher };
}

/**
 * Once the application is ready, the participants registered before the identifier rules are checked in the
 * background (participants/identifier-faults.ts), the log saying how many; a stop ends it after its batch.
 */
function checkIdentifiersAfterStart(app: FastifyInstance, db: Database) {
  let checking: Promise<void> | undefined;
  let stopped = false;
  app.addHook('onReady', () => {
    checking = checkUncheckedIdentifiers(db, () => stopped).then(
      (checked) => {
        if (checked > 0)
          app.log.info(
            { checked },
            `checked the organization identifiers of ${counted(checked, 'participant')} registered before the identifier rules`,
          );
      },
      (error: unknown) =>
        app.log.error(
          { err: error },
          'checking the organization identifiers of earlier participants failed; retried at the next start',
        ),
    );
  });
  app.addHook('onClose', () => {
    stopped = true;
    return checking;
  });
}

/** The standbys' changes of state and failed checks, said in the application's log. */
function replicationLog(app: FastifyInstance): ReplicationOptions {
  return {
    onStateChange: ({ name, state, lagSeconds, reading }) => {
      const line = { standby: name, state, lagSeconds, reading };
      // Out of rotation a standby still takes the reads while the primary does not answer (`reading`).
      if (state === 'in rotation') app.log.info(line, `standby ${name} in rotation`);
      else app.log.warn(line, `standby ${name} ${state}: out of rotation until it is back`);
    },
    onError: (error) => app.log.warn({ err: error }, 'checking a standby failed'),
  };
}

function openConnections(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}
