import type { IncomingMessage, ServerResponse } from 'node:http';
import { declaresBody, type EarlyAnswer } from '../http/early-answers.js';
import { SECURITY_HEADERS } from '../http/security-headers.js';
import type { RequestRecorder } from '../operations/metrics.js';
import { requestIdOf } from '../operations/request-id.js';
import type { SmpPublisher } from './publisher.js';
import { SERVICE_METADATA_ROUTE, serviceLookupOf, XML } from './routes.js';

/**
 * A signed service metadata lookup whose answer is kept, answered before the framework: the same status, headers
 * and bytes as the route would send, and the same metrics (lookups write no request lines there either). Anything
 * else (a miss, another method, a query string, a body, an identifier that does not parse) goes to the route.
 */
export function keptServiceMetadata(publisher: SmpPublisher, record: RequestRecorder): EarlyAnswer {
  return (request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now();
    const body = request.method === 'GET' && !declaresBody(request) ? keptAnswerFor(publisher, request.url ?? '') : undefined;
    if (!body) return false;
    response.writeHead(200, { 'x-request-id': requestIdOf(request), ...SECURITY_HEADERS, 'content-type': XML, 'content-length': body.length });
    response.end(body);
    record('GET', SERVICE_METADATA_ROUTE, 200, performance.now() - startedAt);
    return true;
  };
}

/** `/{participant}/services/{document type}`, decoded as the router decodes its parameters. */
function keptAnswerFor(publisher: SmpPublisher, url: string): Buffer | undefined {
  // Every other request passes here too: it costs one search of its URL, nothing allocated.
  if (!url.includes('/services/')) return undefined;
  // A query string or fragment is the router's to strip: a `?` here may also be part of an identifier (`%3F`).
  if (url.includes('?') || url.includes('#')) return undefined;
  const segments = url.split('/');
  const [root, participantSegment, services, documentTypeSegment] = segments;
  if (segments.length !== 4 || root !== '' || services !== 'services' || participantSegment === undefined || documentTypeSegment === undefined) {
    return undefined;
  }
  try {
    const participant = decodeURIComponent(participantSegment);
    const documentType = decodeURIComponent(documentTypeSegment);
    // The route refuses NUL characters (request hygiene): never answered here.
    if (participant.includes('\u0000') || documentType.includes('\u0000')) return undefined;
    const { organization, documentType: identifier } = serviceLookupOf(participant, documentType);
    return publisher.keptServiceMetadata(organization, identifier);
  } catch {
    return undefined;
  }
}
