import http from 'node:http';
import type { FastifyServerFactory } from 'fastify';

/** Answers a request whole before the framework sees it and returns true, or returns false to hand it on. */
export type EarlyAnswer = (request: http.IncomingMessage, response: http.ServerResponse) => boolean;

export const NO_EARLY_ANSWER: EarlyAnswer = () => false;

/** The longest path parameter the router takes (Fastify's `maxParamLength`); a longer one is its 400. */
export const MAX_PATH_PARAMETER_LENGTH = 1000;

/** What memory answers a request with (status 200): its media type, its bytes, and the route its metrics name. */
export interface HeldAnswer {
  contentType: string;
  body: Buffer;
  route: string;
  /** The request headers the answer depends on (`Vary`), besides its path. */
  vary?: string;
  /** An answer of the API (not the SMP's): it keeps the specification's header constants, caching ones included. */
  api?: true;
}

/**
 * The answer memory holds for a GET without a body or a query string, from its path's segments (raw, as sent: the
 * first is empty) and its headers; undefined for the framework to answer. It may throw: the framework answers then.
 */
export type HeldAnswerFinder = (segments: readonly string[], headers: http.IncomingHttpHeaders) => HeldAnswer | undefined;

/** A request that declares a body (which may not have arrived yet). */
export const declaresBody = (request: http.IncomingMessage) =>
  request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0';

/**
 * The path segments of a request memory may answer: a GET without a body, without a query string or fragment (the
 * router's to strip: a `?` there is never part of an identifier, which would be `%3F`), each segment within the
 * router's bound; else undefined.
 */
export function heldAnswerSegments(request: http.IncomingMessage): string[] | undefined {
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

/** How often Node looks for requests over their time limit; its default (30 s) would let one run to twice the limit. */
const TIME_LIMIT_CHECK_MS = 1000;

/**
 * Fastify's HTTP/1 server with one step in front of the framework: `early()` may answer a request from memory (the
 * network's hottest reads skip routing, hooks and the reply pipeline, about a fifth of their cost); every other
 * request is Fastify's as always. The server takes Fastify's settings as its default server does.
 */
export function serverAnsweringEarly(early: () => EarlyAnswer): FastifyServerFactory {
  return (handler, options) => {
    const settings = options as unknown as ServerSettings;
    // The time limit is Node's, so it holds for every request, those answered early too.
    const limits = { requestTimeout: settings.requestTimeout, connectionsCheckingInterval: TIME_LIMIT_CHECK_MS };
    const server = http.createServer({ ...settings.http, ...limits }, (request, response) => {
      if (!early()(request, response)) handler(request, response);
    });
    server.keepAliveTimeout = settings.keepAliveTimeout;
    server.setTimeout(settings.connectionTimeout);
    if (settings.maxRequestsPerSocket) server.maxRequestsPerSocket = settings.maxRequestsPerSocket;
    return server;
  };
}

/** The server settings among Fastify's options, its defaults applied. */
interface ServerSettings {
  http?: http.ServerOptions | null;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket?: number;
}
