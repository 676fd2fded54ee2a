import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callersCopyIsCurrent } from '../http/public-caching.js';
import { looksLikeIdentifier, participantNamed, serviceLookupOf } from './path-identifiers.js';
import type { SmpPublisher } from './publisher.js';

export interface SmpRoutesOptions {
  publisher: SmpPublisher;
}

type ParticipantParams = { participantId: string };
type ServiceParams = ParticipantParams & { documentTypeId: string };

export const XML = 'text/xml; charset=UTF-8';
// The SMP interface is the Peppol specification's, not part of the registry's OpenAPI description. Only paths that
// hold an identifier (`::`, raw or percent-encoded in either case) are the SMP's: any other gets 404, not 405, for
// other methods. The words of its paths (`services`, `businesscard`) are the specification's, in lower case, as the
// router matches them: a path spelling them otherwise is no path of the SMP's (404 for every method, never 405 for GET).
const IDENTIFIER = '[^/]*(?:::|%3[Aa]%3[Aa])[^/]*';
// The lookups are the network's hottest requests: no request lines for them (see `quietLog`), but for other paths.
const isLookup = (request: FastifyRequest) => looksLikeIdentifier((request.params as ParticipantParams).participantId);
const routeOptions = (pattern: string) => ({
  schema: { hide: true },
  config: { pathPattern: new RegExp(`^${pattern}$`), quietLog: isLookup, publicRead: true },
});

/** The route of the service group, as its metrics name it. */
export const SERVICE_GROUP_ROUTE = '/:participantId';
/** The route of the signed service metadata, as its metrics name it. */
export const SERVICE_METADATA_ROUTE = '/:participantId/services/:documentTypeId';

/**
 * The Peppol SMP 1.x read interface and the Peppol Directory business card, at the root. Static routes (the API,
 * the docs, the web console) win over these parametric ones in the router; a segment that is not `scheme::value`
 * gets the service's ordinary 404, as if these routes were not there.
 */
export default async function smpRoutes(fastify: FastifyInstance, options: SmpRoutesOptions) {
  const { publisher } = options;
  const notOurs = (request: FastifyRequest<{ Params: ParticipantParams }>, reply: FastifyReply) =>
    !isLookup(request) && (reply.callNotFound(), true);

  fastify.get<{ Params: ParticipantParams }>(
    SERVICE_GROUP_ROUTE,
    routeOptions(`/${IDENTIFIER}`),
    async (request, reply) => {
      if (notOurs(request, reply)) return reply;
      return reply
        .type(XML)
        .send(
          await publisher.serviceGroup(
            participantNamed(request.params.participantId),
            `${request.protocol}://${request.host}`,
          ),
        );
    },
  );

  fastify.get<{ Params: ServiceParams }>(
    SERVICE_METADATA_ROUTE,
    routeOptions(`/${IDENTIFIER}/services/[^/]+`),
    async (request, reply) => {
      if (notOurs(request, reply)) return reply;
      const { participant, documentType } = serviceLookupOf(
        request.params.participantId,
        request.params.documentTypeId,
      );
      const answer = await publisher.signedServiceMetadata(participant, documentType, request.ip, (tag) =>
        callersCopyIsCurrent(request, tag),
      );
      return Buffer.isBuffer(answer)
        ? reply.type(XML).send(answer)
        : reply.code(304).header('etag', answer.unchanged).send();
    },
  );

  fastify.get<{ Params: ParticipantParams }>(
    '/businesscard/:participantId',
    routeOptions(`/businesscard/${IDENTIFIER}`),
    async (request, reply) => {
      if (notOurs(request, reply)) return reply;
      return reply.type(XML).send(await publisher.businessCard(participantNamed(request.params.participantId)));
    },
  );
}
