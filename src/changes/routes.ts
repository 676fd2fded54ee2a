import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Queryable } from '../db/database.js';
import { callerOf, Role, type Access } from '../http/auth.js';
import { TooManyRequestsError } from '../core/errors.js';
import { narrowedPage, pageOf, pageRequest } from '../core/paging.js';
import { sharedRuns, Slots } from '../core/concurrency.js';
import { CHANGE_SORTABLE, CHANGE_TIE_BREAKER, changesAfter, findChanges, type ChangeScope } from './repository.js';
import { AUDIT_PAGE_RULE, AuditPage, AuditQuery, FeedPage, FeedQuery, type ChangeEntry, type ChangeFilters } from './schemas.js';
import { FeedCursors } from './cursors.js';
import type { ChangeSignal } from '../db/change-signal.js';
import { deliveryStatus } from '../network/delivery-status.js';
import { heldForThisSmp, keepMigrationKey, networkStateOf, sayOf, smlStateOf, stuckParticipants } from '../network/network.js';
import { appendChange } from '../db/change-log.js';
import { actorOf } from '../http/actor.js';
import { ConflictError, ServiceUnavailableError } from '../core/errors.js';
import { DeliveryStatusList, MigrationKeyForm, MigrationOut, NetworkState, StuckParticipantList, StuckQuery } from './schemas.js';
import { prepareMigrationOut, withdrawMigrationOut } from '../network/migration-out.js';
import { SmlError, type SmlClient } from '../network/sml-client.js';
import { participantKeyOrNotFound, participantNotFound } from '../participants/identifiers.js';
import { getParticipant } from '../participants/repository.js';
import { ParticipantParams } from '../participants/schemas.js';

const READERS: readonly Access[] = [Role.admin, Role.registryAuthority, Role.serviceProvider];

interface ChangeRoutesOptions {
  /** The feed's `wait` polls one user may hold at once; beyond it 429 at once. */
  maxPollsPerUser: number;
  /** The most JSON one page of the audit or the feed carries (CHANGE_PAGE_MAX_BYTES); at least one entry always. */
  pageMaxBytes: number;
}

/** A held poll ends within a minute at most, and usually as soon as a change comes. */
const POLL_RETRY_AFTER_SECONDS = 5;

/** ADMIN and REGISTRY_AUTHORITY see every change; a SERVICE_PROVIDER the history of its own participants. */
function scopeOf(request: FastifyRequest): ChangeScope {
  const caller = callerOf(request);
  return caller.role === Role.serviceProvider ? caller.serviceProviderId : null;
}

/** The entries as `scope` may see them: a provider's without their positions, which count every provider's changes. */
function entriesSeenBy(scope: ChangeScope, entries: ChangeEntry[]): ChangeEntry[] {
  return scope === null ? entries : entries.map(({ seq: _seq, ...entry }) => entry);
}

/**
 * Resolves on the next change this instance hears, after `ms`, when the client goes, or when the service begins to
 * shut down (`closing`), whichever comes first.
 */
function nextChange(changes: ChangeSignal, ms: number, reply: FastifyReply, closing: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop();
      reply.raw.off('close', done);
      closing.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = changes.subscribe(done);
    reply.raw.once('close', done);
    closing.addEventListener('abort', done);
  });
}

/** What a feed read asks, as a key: the polls asking the same at the same time share one read. */
const questionOf = (after: number, limit: number, filters: ChangeFilters, scope: ChangeScope) =>
  JSON.stringify([after, limit, scope, Object.entries(filters).sort()]);

/** The participant the request's path names, within the caller's scope; the participant 404 if none. */
async function participantOf(db: Queryable, app: FastifyInstance, request: FastifyRequest, identifier: string) {
  const participant = await getParticipant(db, participantKeyOrNotFound(identifier), scopeOf(request), app.catalogue);
  if (participant === undefined) throw participantNotFound(identifier);
  return participant;
}

const MOVE_RULE = 'For the organization\'s only service provider with a process, or the registry authority (409 otherwise): the registration is shared by every provider that serves it.';

/** A provider acts on its own participants' organizations; the authority on any organization. */
const NETWORK_ACTORS: readonly Access[] = [Role.serviceProvider, Role.admin, Role.registryAuthority];

/**
 * Whether the caller may move the organization's whole registration in the SML (a migration key in or out, its
 * withdrawal): the authority may; a provider only when it is the organization's only provider with a process, since
 * the registration is every such provider's and a migration moves all of them. 409 otherwise, saying why.
 */
async function mayMoveRegistration(db: Queryable, request: FastifyRequest, organization: string): Promise<void> {
  const caller = callerOf(request);
  if (caller.role !== Role.serviceProvider) return;
  const say = await sayOf(db, organization, caller.serviceProviderId ?? '');
  if (say === 'none') {
    throw new ConflictError(`Your participant of ${organization} has no process: it has no say over the organization's registration in the SML`);
  }
  if (say === 'shared') {
    throw new ConflictError(`Other service providers serve ${organization} too: its registration in the SML is theirs as well, `
      + 'so only the registry authority can move it');
  }
}

/**
 * SML calls a provider waits for (a migration key out, its withdrawal), per user at once: the SML sees every call as
 * this SMP's, whoever asked for it, so one provider must not be able to flood it in the registry's name.
 */
const SML_CALLS_PER_USER = 1;

/**
 * Without an SML configured a 409, whoever asks and whatever the organization: the registry registers nothing in the
 * SML, and no retry changes that (a 503 would invite one).
 */
function configuredSml(sml: SmlClient | undefined): SmlClient {
  if (sml === undefined) throw new ConflictError('No SML is configured (SML_URL): this registry registers no organization in the SML, so none migrates');
  return sml;
}

/** The SML for an operation the provider waits for: its refusal a 409, its failure a 503. */
async function withSml<T>(sml: SmlClient, operation: (sml: SmlClient) => Promise<T>): Promise<T> {
  try {
    return await operation(sml);
  } catch (error) {
    if (!(error instanceof SmlError)) throw error;
    throw error.final ? new ConflictError(`The SML refused: ${error.message}`) : new ServiceUnavailableError(`The SML did not answer; try again: ${error.message}`);
  }
}

/** The audit trail (paged, newest first) and the change feed (after a cursor, with a long-poll variant). */
const changeRoutes: FastifyPluginAsyncTypebox<ChangeRoutesOptions> = async (app, options) => {
  const polls = new Slots(options.maxPollsPerUser);
  // Every waiting poll wakes on each change: those asking the same share one read of it.
  const sharedRead = sharedRuns<Awaited<ReturnType<typeof changesAfter>>>();
  const smlCalls = new Slots(SML_CALLS_PER_USER);
  const cursors = new FeedCursors(app.db);
  // At shutdown (SIGTERM) every waiting poll answers its page as it stands, so that a deploy neither waits out the
  // polls nor cuts them: a follower asks again, from that page's `next`, at the instance that replaces this one.
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });
  const callSml = async <T>(request: FastifyRequest, operation: (sml: SmlClient) => Promise<T>): Promise<T> => {
    const user = callerOf(request).userId;
    if (!smlCalls.take(user)) throw new TooManyRequestsError(1, 'One SML call at a time per user; try again once it is answered', 'sml_calls_refused');
    try {
      return await withSml(configuredSml(app.sml), operation);
    } finally {
      smlCalls.release(user);
    }
  };

  app.get('/audit', {
    schema: {
      summary: 'Find changes: who changed what and when, with the state before and after (newest first)',
      description: AUDIT_PAGE_RULE,
      querystring: AuditQuery, response: { 200: AuditPage },
    },
    config: { access: READERS, mediaTypes: ['audit.find'], objectName: 'auditFilter', reads: 'standby' },
  }, async (request) => {
    const asked = pageRequest(request.query, CHANGE_SORTABLE, CHANGE_TIE_BREAKER);
    const { total, read, rows } = await findChanges(app.db, request.query, scopeOf(request), asked, options.pageMaxBytes);
    const page = rows.length < read ? narrowedPage(asked, rows.length) : asked;
    return pageOf(entriesSeenBy(scopeOf(request), rows.slice(0, page.size)), total, page);
  });

  app.get('/deliveries', {
    schema: {
      summary: 'Delivery to the SML: changes pending, age of the oldest, failed attempts and the last error',
      response: { 200: DeliveryStatusList },
    },
    config: { access: [Role.admin, Role.registryAuthority], mediaTypes: ['deliveries.find'] },
  }, async () => deliveryStatus(app.db));

  app.get('/deliveries/participants', {
    schema: {
      summary: 'Participants whose registration in the SML is stuck: held by another SMP, refused, pending (oldest first)',
      querystring: StuckQuery, response: { 200: StuckParticipantList },
    },
    config: { access: [Role.admin, Role.registryAuthority], mediaTypes: ['deliveries.participants'] },
  }, async (request) => stuckParticipants(app.db, request.query.limit));

  app.get('/participants/:identifier/network', {
    schema: {
      summary: 'The participant\'s place in the network: registered in the SML, pending, held by another SMP; pushed to the Directory',
      params: ParticipantParams, response: { 200: NetworkState },
    },
    config: { access: READERS, mediaTypes: ['participants.network'] },
  }, async (request) => {
    const participant = await participantOf(app.db, app, request, request.params.identifier);
    // A provider whose participant has no process has no part in the organization's registration: it sees nothing of it.
    const hasSay = callerOf(request).role !== Role.serviceProvider || (participant.processes ?? []).length > 0;
    return networkStateOf(app.db, participant.qualifiedIdentifier, { hasSay });
  });

  app.put('/participants/:identifier/migration-key', {
    schema: {
      summary: 'Take the participant\'s organization over from the SMP that holds it, with the migration key its previous provider gave',
      description: MOVE_RULE,
      params: ParticipantParams, body: MigrationKeyForm,
    },
    config: { access: NETWORK_ACTORS, mediaTypes: ['participants.migration-key'], objectName: 'migrationKeyForm' },
  }, async (request, reply) => {
    await app.db.transaction(async (tx) => {
      const participant = await participantOf(tx, app, request, request.params.identifier);
      const organization = participant.qualifiedIdentifier;
      await mayMoveRegistration(tx, request, organization);
      if (heldForThisSmp(await smlStateOf(tx, organization))) throw new ConflictError(`The SML holds ${organization} for this SMP already`);
      await keepMigrationKey(tx, organization, request.body.migrationKey);
      // The change makes the SML delivery try again, now with Migrate; the key stays out of the log.
      await appendChange(tx, actorOf(request), { resource: 'participant', identifier: organization, operation: 'migrate', before: participant, after: participant });
    });
    return reply.status(200).send();
  });

  app.post('/participants/:identifier/migration-out', {
    schema: {
      summary: 'Let another SMP take the participant\'s organization over: a migration key, registered with the SML, shown this once',
      description: MOVE_RULE,
      params: ParticipantParams, response: { 201: MigrationOut },
    },
    config: { access: NETWORK_ACTORS, mediaTypes: ['participants.migration-out'] },
  }, async (request, reply) => {
    const participant = (await participantOf(app.db, app, request, request.params.identifier)).qualifiedIdentifier;
    configuredSml(app.sml);
    await mayMoveRegistration(app.db, request, participant);
    const migrationKey = await callSml(request, (sml) => prepareMigrationOut(app.db, sml, participant));
    return reply.status(201).send({ participant, migrationKey });
  });

  app.delete('/participants/:identifier/migration-out', {
    schema: { summary: 'Withdraw the migration key given out: the SML gets another one, shown to no one', description: MOVE_RULE, params: ParticipantParams },
    config: { access: NETWORK_ACTORS, mediaTypes: ['participants.migration-out'] },
  }, async (request, reply) => {
    const participant = (await participantOf(app.db, app, request, request.params.identifier)).qualifiedIdentifier;
    configuredSml(app.sml);
    await mayMoveRegistration(app.db, request, participant);
    await callSml(request, (sml) => withdrawMigrationOut(app.db, sml, participant));
    return reply.status(204).send();
  });

  app.get('/changes', {
    schema: {
      summary: 'Follow the changes after a cursor, in commit order; `wait` holds the request until one comes',
      querystring: FeedQuery, response: { 200: FeedPage },
    },
    config: { access: READERS, mediaTypes: ['changes.feed'], objectName: 'feedFilter', reads: 'standby' },
  }, async (request, reply) => {
    const { after: cursor, limit, wait, ...filters } = request.query;
    const after = cursor === undefined ? 0 : await cursors.positionOf(cursor);
    const scope = scopeOf(request);
    const answer = async ({ entries, next }: Awaited<ReturnType<typeof changesAfter>>) =>
      ({ entries: entriesSeenBy(scope, entries), next: await cursors.cursorOf(next) });
    if (wait === 0) return answer(await changesAfter(app.db, after, limit, filters, scope, options.pageMaxBytes));
    const user = callerOf(request).userId;
    if (!polls.take(user)) {
      throw new TooManyRequestsError(POLL_RETRY_AFTER_SECONDS, `At most ${options.maxPollsPerUser} waiting polls of the change feed per user`, 'feed_polls_refused');
    }
    try {
      const deadline = Date.now() + wait * 1000;
      // The poll's own first read; the reads after a change are shared.
      let page = await changesAfter(app.db, after, limit, filters, scope, options.pageMaxBytes);
      for (;;) {
        const remaining = deadline - Date.now();
        if (page.entries.length > 0 || remaining <= 0 || reply.raw.destroyed || closing.signal.aborted) return answer(page);
        // Nothing in view yet: wait from the position read, so entries outside the view are not read again. A change
        // this instance heard since the read is read at once; otherwise the next one wakes the request.
        if (app.changes.position <= page.next) await nextChange(app.changes, remaining, reply, closing.signal);
        const { next } = page;
        page = await sharedRead(questionOf(next, limit, filters, scope), () => changesAfter(app.db, next, limit, filters, scope, options.pageMaxBytes));
      }
    } finally {
      polls.release(user);
    }
  });
};

export default changeRoutes;
