import { decodedSegment, type HeldAnswerFinder } from '../http/early-answers/server.js';
import type { SmpPublisher } from './publisher.js';
import { participantNamed, SERVICE_GROUP_ROUTE, SERVICE_METADATA_ROUTE, serviceLookupOf, XML } from './routes.js';

/** An SMP identifier in a path, raw or percent-encoded (either case). */
const IDENTIFIER_SEPARATOR = /::|%3a%3a/i;

/**
 * The SMP lookups memory answers: a kept signed service metadata, and a service group kept or built from what is held
 * (`SmpPublisher.serviceGroupAtOnce`), for `/{participant}` or `/{participant}/services/{document type}`.
 */
export function smpAnswersAtOnce(publisher: SmpPublisher): HeldAnswerFinder {
  return (segments) => {
    const [root, participantSegment, services, documentTypeSegment] = segments;
    // Every other GET passes here too: this finder costs it a search of one segment.
    if (root !== '' || participantSegment === undefined || !IDENTIFIER_SEPARATOR.test(participantSegment)) return undefined;
    const participant = decodedSegment(participantSegment);
    if (segments.length === 2) {
      const body = publisher.serviceGroupAtOnce(participantNamed(participant));
      return body && { body, contentType: XML, route: SERVICE_GROUP_ROUTE };
    }
    if (segments.length !== 4 || services !== 'services' || documentTypeSegment === undefined) return undefined;
    const lookup = serviceLookupOf(participant, decodedSegment(documentTypeSegment));
    const body = publisher.keptServiceMetadata(lookup.participant, lookup.documentType);
    return body && { body, contentType: XML, route: SERVICE_METADATA_ROUTE };
  };
}
