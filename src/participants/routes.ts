import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import { NOT_HELD } from '../core/held.js';
import type { Queryable } from '../db/database.js';
import { callerOf, Role, type Access } from '../http/auth.js';
import { pageOf, pageRequest } from '../core/paging.js';
import { sendJsonArray } from '../http/streaming.js';
import { processListJson } from '../processes/json.js';
import type { ProcessSource } from '../processes/repository.js';
import {
  isUuid,
  participantKeyOrNotFound as keyOf,
  participantNotFound as notFound,
  type ParticipantKey,
} from './identifiers.js';
import {
  findParticipants,
  getParticipant,
  participantsFound,
  getParticipantProcesses,
  PARTICIPANT_SORTABLE,
  PARTICIPANT_TIE_BREAKER,
  streamParticipants,
  type Scope,
} from './repository.js';
import {
  ADD_FORM,
  deleteRegistration,
  registerParticipant,
  transferRegistration,
  UPDATE_FORM,
  updateRegistration,
  type ValueChecks,
} from './writes.js';
import { findIdentifierFaults } from './identifier-faults.js';
import { actorOf } from '../http/actor.js';
import { sendJson } from '../http/held-json.js';
import { participantJson } from './json.js';
import { ForbiddenError, ValidationError } from '../core/errors.js';
import { newParticipantIcdWarning, unknownIcdErrors } from '../identifier-schemes/checks.js';
import {
  AddParticipantForm,
  IdentifierFaultPage,
  IdentifierFaultQuery,
  Participant,
  ParticipantPage,
  ParticipantParams,
  ParticipantQuery,
  ProcessList,
  TransferParams,
  UpdateParticipantForm,
} from './schemas.js';

const PROVIDERS: readonly Access[] = [Role.serviceProvider];
export const READERS: readonly Access[] = [Role.serviceProvider, Role.admin, Role.registryAuthority];
const PROVIDERS_AND_ADMINS: readonly Access[] = [Role.serviceProvider, Role.admin];

/** The role set of a path shape: one for a qualified identifier, another for a UUID. */
const byKind = (qualified: readonly Access[], identifier: readonly Access[]) => (request: FastifyRequest) =>
  isUuid(pathIdentifierOf(request.params)) ? identifier : qualified;

/** The `identifier` of a request's path parameters, '' without one (the rule is asked before they are validated). */
function pathIdentifierOf(params: unknown): string {
  const given = typeof params === 'object' && params !== null && 'identifier' in params ? params.identifier : undefined;
  return String(given ?? '');
}

/** A service provider works on its own participants only; ADMIN and REGISTRY_AUTHORITY on all. */
export function scopeOf(request: FastifyRequest): Scope {
  const caller = callerOf(request);
  return caller.role === Role.serviceProvider ? caller.serviceProviderId : null;
}

/** The service provider a SERVICE_PROVIDER caller acts for (the users table gives each one); 403 for anyone else. */
function ownProviderOf(request: FastifyRequest): string {
  const { serviceProviderId } = callerOf(request);
  if (serviceProviderId === null) throw new ForbiddenError();
  return serviceProviderId;
}

export interface ParticipantRoutesOptions {
  /** IDENTIFIER_VALUE_CHECKS: `record` (false) stores a value that breaks its scheme's rule; default `refuse`. */
  valueChecks?: ValueChecks;
}

const participants: FastifyPluginAsyncTypebox<ParticipantRoutesOptions> = async (app, options) => {
  const valueChecks = options.valueChecks ?? 'refuse';
  /**
   * A GET answering what `read` finds of the participant the path names, within the caller's scope, as `json` writes
   * it (the bytes `answer` describes); the participant 404 if none.
   */
  const getOwn = <Answer extends TSchema>(
    url: string,
    answer: Answer,
    mediaType: string,
    read: (
      db: Queryable,
      key: ParticipantKey,
      scope: Scope,
      processes: ProcessSource,
    ) => Promise<Static<Answer> | undefined>,
    json: (found: Static<Answer>) => Buffer,
  ) => {
    // Widened for the route, whose reply type cannot follow a generic schema; `read` is checked against `answer` above.
    const response: { 200: TSchema } = { 200: answer };
    app.get(
      url,
      {
        schema: { params: ParticipantParams, response },
        config: { access: byKind(PROVIDERS, READERS), mediaTypes: [mediaType] },
      },
      async (request, reply) => {
        const { identifier } = request.params;
        const found = await read(app.db, keyOf(identifier), scopeOf(request), app.catalogue);
        if (found === undefined) throw notFound(identifier);
        return sendJson(reply, json(found));
      },
    );
  };

  app.get(
    '/',
    {
      schema: { querystring: ParticipantQuery, response: { 200: ParticipantPage } },
      config: {
        access: READERS,
        mediaTypes: ['participants.find'],
        streamMediaType: 'participants.stream',
        objectName: 'participantFilter',
        reads: 'standby',
      },
    },
    async (request, reply) => {
      const page = pageRequest(request.query, PARTICIPANT_SORTABLE, PARTICIPANT_TIE_BREAKER);
      const unknown = unknownIcdErrors(await app.catalogue.identifierSchemes(), 'icd', request.query.icd);
      if (unknown.length > 0) throw ValidationError.of('queryParameters', unknown);
      const scope = scopeOf(request);
      if (request.wantsStream)
        return sendJsonArray(reply, Participant, streamParticipants(app.db, request.query, scope, page.orderBy));
      const indexed = await app.heldParticipants.search(request.query, scope, page);
      if (indexed !== NOT_HELD) {
        const { total, rows } = await participantsFound(app.db, indexed, request.query, scope);
        return pageOf(rows, total, page);
      }
      const counted = await app.heldParticipants.total(request.query, scope);
      const { total, rows } = await findParticipants(
        app.db,
        request.query,
        scope,
        page,
        counted === NOT_HELD ? undefined : counted,
      );
      return pageOf(rows, total, page);
    },
  );

  getOwn('/:identifier', Participant, 'participants.get', getParticipant, participantJson);

  app.post(
    '/',
    {
      schema: {
        description:
          'The ICD must be one the registry accepts now (docs/spec/DECISIONS.md, "Identifiers"): with the Peppol ' +
          'Participant Identifier Schemes code list loaded, one of its schemes not past its removal date (from the UTC start of ' +
          "that day: 400, code `IcdRemoved`, naming the date); without one, one of the specification's ICDs (400, code `Icd`). " +
          'A deprecated ICD, or one due for removal, is accepted with a `Warning: 299 registry "<text>"` header saying so. ' +
          "A service provider's own identifier (ICD 0242, its Message Level Status address `0242:<Main ID>` or a variant " +
          '`<Main ID>-<Use Case>[.<sub>]`) is taken only by the provider whose access point certificate carries that Main ID (the last six ' +
          'digits of the Peppol Seat ID in its subject); any other provider is answered 403 saying what its certificates carry. ' +
          'See also `POST /rest/api/mls-receivers`.',
        body: AddParticipantForm,
        response: { 201: Participant },
      },
      config: { access: PROVIDERS, mediaTypes: ['participants.add'], objectName: ADD_FORM },
    },
    async (request, reply) => {
      const serviceProviderId = ownProviderOf(request);
      const { icd, organizationIdentifier } = request.body;
      // Asked before the transaction: no transaction waits for the register.
      const checked = await app.organizationCheck?.check(
        { icd, organizationIdentifier: organizationIdentifier.toLowerCase() },
        serviceProviderId,
        ADD_FORM,
      );
      const participant = await app.db.transaction(async (tx) => {
        const registered = await registerParticipant(
          tx,
          actorOf(request),
          serviceProviderId,
          request.body,
          app.catalogue,
          valueChecks,
        );
        if (checked) await app.organizationCheck?.record(tx, actorOf(request), [checked]);
        return registered;
      });
      const warning = newParticipantIcdWarning(await app.catalogue.identifierSchemes(), participant.icd);
      if (warning !== undefined) reply.header('warning', warning);
      return sendJson(reply.status(201), participantJson(participant));
    },
  );

  app.put(
    '/:identifier',
    {
      schema: { params: ParticipantParams, body: UpdateParticipantForm, response: { 200: Participant } },
      config: { access: PROVIDERS, mediaTypes: ['participants.update'], objectName: UPDATE_FORM },
    },
    async (request, reply) => {
      const participant = await app.db.transaction((tx) =>
        updateRegistration(
          tx,
          actorOf(request),
          request.params.identifier,
          scopeOf(request),
          request.body,
          app.catalogue,
        ),
      );
      return sendJson(reply, participantJson(participant));
    },
  );

  app.delete(
    '/:identifier',
    {
      schema: { params: ParticipantParams },
      config: { access: byKind(PROVIDERS, PROVIDERS_AND_ADMINS), mediaTypes: ['participants.delete'] },
    },
    async (request, reply) => {
      await app.db.transaction((tx) =>
        deleteRegistration(tx, actorOf(request), request.params.identifier, scopeOf(request), app.catalogue),
      );
      return reply.status(204).send();
    },
  );

  getOwn('/:identifier/processes', ProcessList, 'participants.processes', getParticipantProcesses, processListJson);

  app.put(
    '/:identifier/transfer/:serviceProviderIdentifier',
    {
      schema: { params: TransferParams },
      config: { access: PROVIDERS, mediaTypes: ['participants.transfer'] },
    },
    async (request, reply) => {
      const { identifier, serviceProviderIdentifier } = request.params;
      await app.db.transaction((tx) =>
        transferRegistration(
          tx,
          actorOf(request),
          identifier,
          scopeOf(request),
          serviceProviderIdentifier,
          app.catalogue,
        ),
      );
      return reply.status(200).send();
    },
  );
};

export default participants;

/**
 * The participants whose organization identifier breaks its scheme's rule, a path apart from /participants: there a
 * segment names a participant, and every method of /participants/{identifier} would take this one's name too.
 */
export const identifierFaults: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      schema: {
        summary:
          "Find the participants whose organization identifier breaks its scheme's rule (registered before the rules, or with " +
          'IDENTIFIER_VALUE_CHECKS=false), each with what is wrong; a service provider sees its own',
        description:
          "Each ICD's rule is the Peppol Participant Identifier Schemes code list's pattern and check digit. These participants " +
          'are published as before: nothing changes them. Sortable as the participants are.',
        querystring: IdentifierFaultQuery,
        response: { 200: IdentifierFaultPage },
      },
      config: { access: READERS, mediaTypes: ['identifier-faults.find'] },
    },
    async (request) => {
      const page = pageRequest(request.query, PARTICIPANT_SORTABLE, PARTICIPANT_TIE_BREAKER);
      const { total, rows } = await findIdentifierFaults(app.db, scopeOf(request), page);
      return pageOf(rows, total, page);
    },
  );
};
