import http from 'node:http';
import type { FastifyServerFactory } from 'fastify';

/** Answers a request whole before the framework sees it and returns true, or returns false to hand it on. */
export type EarlyAnswers = (request: http.IncomingMessage, response: http.ServerResponse) => boolean;

export const NO_EARLY_ANSWERS: EarlyAnswers = () => false;

/** The longest path parameter the router takes (Fastify's `maxParamLength`); a longer one is its 400. */
export const MAX_PATH_PARAMETER_LENGTH = 1000;

/** A request that declares a body (which may not have arrived yet). */
export const declaresBody = (request: http.IncomingMessage) =>
  request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0';

/** How often Node looks for requests over their time limit; its default (30 s) would let one run to twice the limit. */
const TIME_LIMIT_CHECK_MS = 1000;

/**
 * Fastify's HTTP/1 server with one step in front of the framework: `early()` may answer a request from memory (the
 * network's hottest reads skip routing, hooks and the reply pipeline, about a fifth of their cost); every other
 * request is Fastify's as always. The server takes Fastify's settings as its default server does.
 */
export function serverAnsweringEarly(early: () => EarlyAnswers): FastifyServerFactory {
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
