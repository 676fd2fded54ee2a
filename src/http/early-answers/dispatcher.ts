import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { heldAnswerReply } from '../public-caching.js';
import { declaresBody, MAX_PATH_PARAMETER_LENGTH, type EarlyAnswers } from './server.js';

/** Counts a request answered and its time in the request metrics (operations/metrics.ts, requestRecorder). */
type RequestRecorder = (method: string, route: string, status: number, milliseconds: number) => void;

/** What memory answers a request with (status 200, or 304 when the caller's copy is current): its media type and its bytes. */
export interface EarlyAnswer {
  contentType: string;
  body: Buffer;
  /** The request headers the answer depends on (`Vary`), besides its path. */
  vary?: string;
  /** An answer of the API (not the SMP's): it keeps the specification's header constants, caching ones included. */
  api?: true;
}

/** A route's parameters as the request's path gives them: raw, as sent (`decodedSegment` decodes one). */
export type RawParams = Readonly<Record<string, string>>;

/** A GET route whose answer memory may hold, declared against the route string Fastify registers. */
export interface EarlyRoute {
  /** The route as Fastify has it, prefix included (`/:participantId`): the path is matched against it, the metrics name it. */
  route: string;
  /** The answer memory holds, from the route's parameters and the headers; undefined, or a throw, for the route to answer. */
  answer(params: RawParams, headers: IncomingHttpHeaders): EarlyAnswer | undefined;
}

/** A route's segments: a literal to match as it is, or (`:name`) a parameter that takes any segment but the empty one. */
type Pattern = ReadonlyArray<{ literal: string } | { parameter: string }>;

const patternOf = (route: string): Pattern =>
  route.split('/').map((segment) => (segment.startsWith(':') ? { parameter: segment.slice(1) } : { literal: segment }));

/** The route's parameters in `segments`, or undefined when the path is not the route's. */
function paramsOf(pattern: Pattern, segments: readonly string[]): RawParams | undefined {
  if (segments.length !== pattern.length) return undefined;
  const params: Record<string, string> = {};
  for (const [index, part] of pattern.entries()) {
    const segment = segments[index] ?? '';
    if ('literal' in part ? segment !== part.literal : segment === '') return undefined;
    if ('parameter' in part) params[part.parameter] = segment;
  }
  return params;
}

/**
 * The path segments of a request memory may answer: a GET without a body, without a query string or fragment (the
 * router's to strip: a `?` there is never part of an identifier, which would be `%3F`), each segment within the
 * router's bound; else undefined.
 */
function earlySegments(request: IncomingMessage): string[] | undefined {
  const url = request.url ?? '';
  if (request.method !== 'GET' || declaresBody(request) || url.includes('?') || url.includes('#')) return undefined;
  const segments = url.split('/');
  return segments.every((segment) => segment.length <= MAX_PATH_PARAMETER_LENGTH) ? segments : undefined;
}

/** A path segment decoded as the router decodes its parameters; throws for one holding NUL, which the routes refuse. */
export function decodedSegment(segment: string): string {
  const text = decodeURIComponent(segment);
  if (text.includes('\u0000')) throw new Error('NUL in a path segment');
  return text;
}

/**
 * The lookups answered from memory before the framework: the first of `routes` whose path the request's is and whose
 * answer memory holds (the SMP's, the public lookup's). The same status, headers and bytes as the route would send,
 * and the same metrics (their routes write no request lines either), a 304 when the caller's copy is current. Anything else (what memory cannot answer, another
 * method, a query string, a body, a path that does not parse) goes to the route.
 */
export function earlyAnswers(
  routes: readonly EarlyRoute[],
  record: RequestRecorder,
  requestIdOf: (request: IncomingMessage) => string,
  smpCacheControl: string,
): EarlyAnswers {
  const patterns = routes.map((route) => ({ route, pattern: patternOf(route.route) }));
  return (request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now();
    const segments = earlySegments(request);
    const found = segments && earlyAnswer(patterns, segments, request.headers);
    if (!found) return false;
    const { body, contentType, vary, api } = found.answer;
    const reply = heldAnswerReply(body, contentType, request.headers, api ? undefined : smpCacheControl, vary);
    response.writeHead(reply.status, { 'x-request-id': requestIdOf(request), ...reply.headers });
    response.end(reply.body);
    record('GET', found.route, reply.status, performance.now() - startedAt);
    return true;
  };
}

function earlyAnswer(
  patterns: ReadonlyArray<{ route: EarlyRoute; pattern: Pattern }>,
  segments: readonly string[],
  headers: IncomingHttpHeaders,
) {
  try {
    for (const { route, pattern } of patterns) {
      const params = paramsOf(pattern, segments);
      const answer = params && route.answer(params, headers);
      if (answer) return { answer, route: route.route };
    }
  } catch {
    // What the route's early answer could not read (a segment that does not decode or parse) is the route's to refuse.
  }
  return undefined;
}
