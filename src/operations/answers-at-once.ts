import type { IncomingMessage, ServerResponse } from 'node:http';
import { heldAnswerSegments, type EarlyAnswer, type HeldAnswerFinder } from '../http/early-answers.js';
import { heldAnswerReply } from '../http/public-caching.js';
import type { RequestRecorder } from './metrics.js';
import { requestIdOf } from './request-id.js';

/**
 * The lookups answered from memory before the framework: the first of `finders` that holds the answer (the SMP's, the
 * public lookup's). The same status, headers and bytes as the route would send, and the same metrics (their routes
 * write no request lines either), a 304 when the caller's copy is current. Anything else (what memory cannot answer, another method, a query string, a body, a
 * path that does not parse) goes to the route.
 */
export function answersAtOnce(finders: readonly HeldAnswerFinder[], record: RequestRecorder, smpCacheControl: string): EarlyAnswer {
  return (request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now();
    const segments = heldAnswerSegments(request);
    const answer = segments && heldAnswer(finders, segments, request);
    if (!answer) return false;
    const { status, headers, body } = heldAnswerReply(answer.body, answer.contentType, request.headers, answer.api ? undefined : smpCacheControl, answer.vary);
    response.writeHead(status, { 'x-request-id': requestIdOf(request), ...headers });
    response.end(body);
    record('GET', answer.route, status, performance.now() - startedAt);
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
