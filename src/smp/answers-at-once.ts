import type { IncomingMessage, ServerResponse } from 'node:http';
import { declaresBody, type EarlyAnswer } from '../http/early-answers.js';
import { SECURITY_HEADERS } from '../http/security-headers.js';
import type { RequestRecorder } from '../operations/metrics.js';
import { requestIdOf } from '../operations/request-id.js';
import type { SmpPublisher } from './publisher.js';
import { organizationNamed, SERVICE_GROUP_ROUTE, SERVICE_METADATA_ROUTE, serviceLookupOf, XML } from './routes.js';

/**
 * The SMP lookups answered from memory before the framework: a kept signed service metadata, and a service group kept
 * or built from what is held (`SmpPublisher.serviceGroupAtOnce`). The same status, headers and bytes as the route
 * would send, and the same metrics (lookups write no request lines there either). Anything else (what memory cannot
 * answer, another method, a query string, a body, an identifier that does not parse) goes to the route.
 */
export function smpAnswersAtOnce(publisher: SmpPublisher, record: RequestRecorder): EarlyAnswer {
  return (request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now();
    const answer = request.method === 'GET' && !declaresBody(request) ? answerFor(publisher, request.url ?? '') : undefined;
    if (!answer) return false;
    const { body, route } = answer;
    response.writeHead(200, { 'x-request-id': requestIdOf(request), ...SECURITY_HEADERS, 'content-type': XML, 'content-length': body.length });
    response.end(body);
    record('GET', route, 200, performance.now() - startedAt);
    return true;
  };
}

/** An SMP identifier in a path, raw or percent-encoded (either case). */
const IDENTIFIER_SEPARATOR = /::|%3a%3a/i;

/**
 * `/{participant}` or `/{participant}/services/{document type}`, decoded as the router decodes its parameters, when
 * memory answers it.
 */
function answerFor(publisher: SmpPublisher, url: string): { body: Buffer; route: string } | undefined {
  // Every other request passes here too: it costs a search of its URL, nothing allocated.
  if (!IDENTIFIER_SEPARATOR.test(url)) return undefined;
  // A query string or fragment is the router's to strip: a `?` here may also be part of an identifier (`%3F`).
  if (url.includes('?') || url.includes('#')) return undefined;
  const segments = url.split('/');
  const [root, participantSegment, services, documentTypeSegment] = segments;
  if (root !== '' || participantSegment === undefined) return undefined;
  try {
    const participant = decoded(participantSegment);
    if (segments.length === 2) {
      const body = publisher.serviceGroupAtOnce(organizationNamed(participant));
      return body && { body, route: SERVICE_GROUP_ROUTE };
    }
    if (segments.length !== 4 || services !== 'services' || documentTypeSegment === undefined) return undefined;
    const { organization, documentType } = serviceLookupOf(participant, decoded(documentTypeSegment));
    const body = publisher.keptServiceMetadata(organization, documentType);
    return body && { body, route: SERVICE_METADATA_ROUTE };
  } catch {
    return undefined;
  }
}

/** A path segment decoded; throws for one holding NUL, which the route refuses (request hygiene). */
function decoded(segment: string): string {
  const text = decodeURIComponent(segment);
  if (text.includes('\u0000')) throw new Error('NUL in a path segment');
  return text;
}
