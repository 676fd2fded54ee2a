import type { IncomingMessage, ServerResponse } from 'node:http';
import { heldAnswerSegments, type EarlyAnswer, type HeldAnswerFinder } from './server.js';
import { SECURITY_HEADERS } from '../security-headers.js';

/** Counts a request answered and its time in the request metrics (operations/metrics.ts, requestRecorder). */
type RequestRecorder = (method: string, route: string, status: number, milliseconds: number) => void;

/**
 * The lookups answered from memory before the framework: the first of `finders` that holds the answer (the SMP's, the
 * public lookup's). The same status, headers and bytes as the route would send, and the same metrics (their routes
 * write no request lines either). Anything else (what memory cannot answer, another method, a query string, a body, a
 * path that does not parse) goes to the route.
 */
export function answersAtOnce(
  finders: readonly HeldAnswerFinder[], record: RequestRecorder, requestIdOf: (request: IncomingMessage) => string,
): EarlyAnswer {
  return (request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now();
    const segments = heldAnswerSegments(request);
    const answer = segments && heldAnswer(finders, segments, request);
    if (!answer) return false;
    const { body, contentType, route } = answer;
    response.writeHead(200, { 'x-request-id': requestIdOf(request), ...SECURITY_HEADERS, 'content-type': contentType, 'content-length': body.length });
    response.end(body);
    record('GET', route, 200, performance.now() - startedAt);
    return true;
  };
}

function heldAnswer(finders: readonly HeldAnswerFinder[], segments: readonly string[], request: IncomingMessage) {
  try {
    for (const find of finders) {
      const answer = find(segments, request.headers);
      if (answer) return answer;
    }
  } catch {
    // What the finder could not read (a segment that does not decode or parse) is the route's to refuse.
  }
  return undefined;
}
