import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Queryable } from '../db/database.js';
import { appendChange } from '../db/change-log.js';
import { callerOf, Role, type Access } from '../http/auth.js';
import { actorOf } from '../http/actor.js';
import { ConflictError, ServiceUnavailableError, TooManyRequestsError } from '../core/errors.js';
import { Slots } from '../core/concurrency.js';
import { participantKeyOrNotFound, participantNotFound } from '../participants/identifiers.js';
import { getParticipant } from '../participants/repository.js';
import { scopeOf } from '../participants/routes.js';
import { ParticipantParams } from '../participants/schemas.js';
import { deliveryStatus } from './delivery-status.js';
import { prepareMigrationOut, withdrawMigrationOut } from './migration-out.js';
import { heldForThisSmp, keepMigrationKey, networkStateOf, sayOf, smlStateOf, stuckParticipants } from './network.js';
import {
  DeliveryStatusList,
  MigrationKeyForm,
  MigrationOut,
  NetworkState,
  StuckParticipantList,
  StuckQuery,
} from './schemas.js';
import { SmlError, type SmlClient } from './sml-client.js';

/** The participant the request's path names, within the caller's scope; the participant 404 if none. */
async function participantOf(db: Queryable, app: FastifyInstance, request: FastifyRequest, identifier: string) {
  const participant = await getParticipant(db, participantKeyOrNotFound(identifier), scopeOf(request), app.catalogue);
  if (participant === undefined) throw participantNotFound(identifier);
  return participant;
}

/** Who sees a participant's place in the network: a provider its own participants' (participants/routes.ts, scopeOf). */
const READERS: readonly Access[] = [Role.admin, Role.registryAuthority, Role.serviceProvider];

const MOVE_RULE =
  "For the organization's only service provider with a process, or the registry authority (409 otherwise): the registration is shared by every provider that serves it.";

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
    throw new ConflictError(
      `Your participant of ${organization} has no process: it has no say over the organization's registration in the SML`,
    );
  }
  if (say === 'shared') {
    throw new ConflictError(
      `Other service providers serve ${organization} too: its registration in the SML is theirs as well, ` +
        'so only the registry authority can move it',
    );
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
  if (sml === undefined)
    throw new ConflictError(
      'No SML is configured (SML_URL): this registry registers no organization in the SML, so none migrates',
    );
  return sml;
}

/** The SML for an operation the provider waits for: its refusal a 409, its failure a 503. */
async function withSml<T>(sml: SmlClient, operation: (sml: SmlClient) => Promise<T>): Promise<T> {
  try {
    return await operation(sml);
  } catch (error) {
    if (!(error instanceof SmlError)) throw error;
    throw error.final
      ? new ConflictError(`The SML refused: ${error.message}`)
      : new ServiceUnavailableError(`The SML did not answer; try again: ${error.message}`);
  }
}

/**
 * The SML and Directory deliveries' state, a participant's place in the network, and the migrations of an
 * organization's registration in the SML (a key in, a key out, its withdrawal).
 */
const networkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const smlCalls = new Slots(SML_CALLS_PER_USER);
  const callSml = async <T>(request: FastifyRequest, operation: (sml: SmlClient) => Promise<T>): Promise<T> => {
    const user = callerOf(request).userId;
    if (!smlCalls.take(user))
      throw new TooManyRequestsError(
        1,
        'One SML call at a time per user; try again once it is answered',
        'sml_calls_refused',
      );
    try {
      return await withSml(configuredSml(app.sml), operation);
    } finally {
      smlCalls.release(user);
    }
  };

  app.get(
    '/deliveries',
    {
      schema: {
        summary: 'Delivery to the SML: changes pending, age of the oldest, failed attempts and the last error',
        response: { 200: DeliveryStatusList },
      },
      config: { access: [Role.admin, Role.registryAuthority], mediaTypes: ['deliveries.find'] },
    },
    async () => deliveryStatus(app.db),
  );

  app.get(
    '/deliveries/participants',
    {
      schema: {
        summary:
          'Participants whose registration in the SML is stuck: held by another SMP, refused, pending (oldest first)',
        querystring: StuckQuery,
        response: { 200: StuckParticipantList },
      },
      config: { access: [Role.admin, Role.registryAuthority], mediaTypes: ['deliveries.participants'] },
    },
    async (request) => stuckParticipants(app.db, request.query.limit),
  );

  app.get(
    '/participants/:identifier/network',
    {
      schema: {
        summary:
          "The participant's place in the network: registered in the SML, pending, held by another SMP; pushed to the Directory",
        params: ParticipantParams,
        response: { 200: NetworkState },
      },
      config: { access: READERS, mediaTypes: ['participants.network'] },
    },
    async (request) => {
      const participant = await participantOf(app.db, app, request, request.params.identifier);
      // A provider whose participant has no process has no part in the organization's registration: it sees nothing of it.
      const hasSay = callerOf(request).role !== Role.serviceProvider || (participant.processes ?? []).length > 0;
      return networkStateOf(app.db, participant.qualifiedIdentifier, { hasSay });
    },
  );

  app.put(
    '/participants/:identifier/migration-key',
    {
      schema: {
        summary:
          "Take the participant's organization over from the SMP that holds it, with the migration key its previous provider gave",
        description: MOVE_RULE,
        params: ParticipantParams,
        body: MigrationKeyForm,
      },
      config: { access: NETWORK_ACTORS, mediaTypes: ['participants.migration-key'], objectName: 'migrationKeyForm' },
    },
    async (request, reply) => {
      await app.db.transaction(async (tx) => {
        const participant = await participantOf(tx, app, request, request.params.identifier);
        const organization = participant.qualifiedIdentifier;
        await mayMoveRegistration(tx, request, organization);
        if (heldForThisSmp(await smlStateOf(tx, organization)))
          throw new ConflictError(`The SML holds ${organization} for this SMP already`);
        await keepMigrationKey(tx, organization, request.body.migrationKey);
        // The change makes the SML delivery try again, now with Migrate; the key stays out of the log.
        await appendChange(tx, actorOf(request), {
          resource: 'participant',
          identifier: organization,
          operation: 'migrate',
          before: participant,
          after: participant,
        });
      });
      return reply.status(200).send();
    },
  );

  app.post(
    '/participants/:identifier/migration-out',
    {
      schema: {
        summary:
          "Let another SMP take the participant's organization over: a migration key, registered with the SML, shown this once",
        description: MOVE_RULE,
        params: ParticipantParams,
        response: { 201: MigrationOut },
      },
      config: { access: NETWORK_ACTORS, mediaTypes: ['participants.migration-out'] },
    },
    async (request, reply) => {
      const participant = (await participantOf(app.db, app, request, request.params.identifier)).qualifiedIdentifier;
      configuredSml(app.sml);
      await mayMoveRegistration(app.db, request, participant);
      const migrationKey = await callSml(request, (sml) => prepareMigrationOut(app.db, sml, participant));
      return reply.status(201).send({ participant, migrationKey });
    },
  );

  app.delete(
    '/participants/:identifier/migration-out',
    {
      schema: {
        summary: 'Withdraw the migration key given out: the SML gets another one, shown to no one',
        description: MOVE_RULE,
        params: ParticipantParams,
      },
      config: { access: NETWORK_ACTORS, mediaTypes: ['participants.migration-out'] },
    },
    async (request, reply) => {
      const participant = (await participantOf(app.db, app, request, request.params.identifier)).qualifiedIdentifier;
      configuredSml(app.sml);
      await mayMoveRegistration(app.db, request, participant);
      await callSml(request, (sml) => withdrawMigrationOut(app.db, sml, participant));
      return reply.status(204).send();
    },
  );
};

export default networkRoutes;
