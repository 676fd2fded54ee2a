import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../db/database.js';
import { resolveReference, SERVICE_PROVIDER_REFERENCE } from '../db/references.js';
import { callerOf, Role, type Access } from '../http/auth.js';
import { actorOf } from '../http/actor.js';
import { ForbiddenError, ValidationError } from '../core/errors.js';
import { MLS_RECEIVER_FORM, mlsReceivers, registerMlsReceiver } from './mls-receivers.js';
import { MlsReceiver, MlsReceiverForm, MlsReceiverList, MlsReceiverQuery } from './schemas.js';

const ACTORS: readonly Access[] = [Role.serviceProvider, Role.admin, Role.registryAuthority];

const RULE =
  "A service provider's MLS address is `iso6523-actorid-upis::0242:<Main ID>`, the Main ID being the last six digits of " +
  "the Peppol Seat ID (the subject CN, `P[A-Z]{2}[0-9]{6}`) of its access point's certificates. A SERVICE_PROVIDER reads and " +
  "registers its own; ADMIN and REGISTRY_AUTHORITY any provider's. Registered like any participant: in the SMP and the SML, " +
  'not in the Peppol Directory.';

/** A SERVICE_PROVIDER's own provider (another `named`: 403); null for ADMIN and REGISTRY_AUTHORITY, who name any. */
function ownProviderOf(request: FastifyRequest, named: string | undefined): string | null {
  const caller = callerOf(request);
  if (caller.role !== Role.serviceProvider) return null;
  const own = caller.serviceProviderId;
  if (own === null) throw new ForbiddenError();
  if (named !== undefined && named.toLowerCase() !== own)
    throw new ForbiddenError('A service provider registers its own MLS address only');
  return own;
}

/** The provider a registration is for: the caller's own, or the one the authority names (400 when none or unknown). */
async function registeredProviderOf(
  tx: Queryable,
  request: FastifyRequest,
  named: { identifier: string } | undefined,
): Promise<string> {
  const own = ownProviderOf(request, named?.identifier);
  if (own !== null) return own;
  const { id, errors } = named
    ? await resolveReference(tx, SERVICE_PROVIDER_REFERENCE, named, 'serviceProvider')
    : {
        id: null,
        errors: [
          {
            field: 'serviceProvider',
            code: 'NotNull',
            typeName: 'ServiceProviderIdentifiable',
            defaultMessage: UNNAMED,
          },
        ],
      };
  if (id === null) throw ValidationError.of(MLS_RECEIVER_FORM, errors);
  return id;
}

const UNNAMED = 'must not be null: name the service provider whose MLS address to register';

const mlsReceiverRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      schema: {
        summary: 'The MLS addresses of service providers (a provider: its own), each with whether it is registered',
        description: RULE,
        querystring: MlsReceiverQuery,
        response: { 200: MlsReceiverList },
      },
      config: { access: ACTORS, mediaTypes: ['mls-receivers.find'], objectName: 'mlsReceiverFilter' },
    },
    async (request) => {
      const named = request.query.serviceProvider;
      return mlsReceivers(app.db, ownProviderOf(request, named) ?? named?.toLowerCase() ?? null);
    },
  );

  app.post(
    '/',
    {
      schema: {
        summary:
          "Register a service provider's MLS address in one step: the 0242 participant of its Main ID, receiving the MLS process",
        description:
          `${RULE} 201 when a participant was made, 200 when an existing one was given the MLS process; 409 when the ` +
          'address is registered already or the certificates carry no Seat ID.',
        body: MlsReceiverForm,
        response: { 200: MlsReceiver, 201: MlsReceiver },
      },
      config: { access: ACTORS, mediaTypes: ['mls-receivers.add'], objectName: MLS_RECEIVER_FORM },
    },
    async (request, reply) => {
      const answer = await app.db.transaction(async (tx) =>
        registerMlsReceiver(
          tx,
          actorOf(request),
          await registeredProviderOf(tx, request, request.body.serviceProvider),
          request.body.contact,
          app.catalogue,
        ),
      );
      return reply.status(answer.created > 0 ? 201 : 200).send(answer.receiver);
    },
  );
};

export default mlsReceiverRoutes;
