import { NOT_HELD } from '../core/held.js';
import { decodedSegment, type EarlyRoute } from '../http/early-answers/dispatcher.js';
import { participantNamed, serviceLookupOf } from './path-identifiers.js';
import type { SmpPublisher } from './publisher.js';
import { SERVICE_GROUP_ROUTE, SERVICE_METADATA_ROUTE, XML } from './routes.js';

/** An SMP identifier in a path, raw or percent-encoded (either case). */
const IDENTIFIER_SEPARATOR = /::|%3a%3a/i;

/** The participant segment, decoded, when it is an SMP identifier; every other GET of two segments costs this one search. */
const participantSegmentOf = (segment: string | undefined) =>
  segment !== undefined && IDENTIFIER_SEPARATOR.test(segment) ? decodedSegment(segment) : undefined;

/**
 * The SMP lookups memory answers: a service group kept or built from what is held (`SmpPublisher.serviceGroupHeld`),
 * and a kept signed service metadata.
 */
export function smpEarlyRoutes(publisher: SmpPublisher): EarlyRoute[] {
  return [
    {
      route: SERVICE_GROUP_ROUTE,
      answer: ({ participantId }) => {
        const participant = participantSegmentOf(participantId);
        const body = participant ? publisher.serviceGroupHeld(participantNamed(participant)) : NOT_HELD;
        return body === NOT_HELD ? undefined : { body, contentType: XML };
      },
    },
    {
      route: SERVICE_METADATA_ROUTE,
      answer: ({ participantId, documentTypeId = '' }) => {
        const participant = participantSegmentOf(participantId);
        const lookup = participant && serviceLookupOf(participant, decodedSegment(documentTypeId));
        const body = lookup && publisher.keptServiceMetadata(lookup.participant, lookup.documentType);
        return body ? { body, contentType: XML } : undefined;
      },
    },
  ];
}
