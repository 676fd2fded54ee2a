import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import pino from 'pino';

type LoggerOptions = Exclude<NonNullable<FastifyServerOptions['logger']>, boolean>;

/**
 * What never reaches a log line, whoever logs it: credentials in headers and any `password` property up to
 * three levels down (request bodies, user forms, errors carrying them).
 */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'password',
  '*.password',
  '*.*.password',
  '*.*.*.password',
];

/** JSON lines (pino's format) with the request id under `reqId`, and the redactions above. */
export function loggerOptions(level: string, stream?: LoggerOptions['stream']): LoggerOptions {
  return { level, redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' }, ...(stream ? { stream } : {}) };
}

/**
 * Standard output, written in blocks of 4 KiB or more, at the latest every quarter of a second, and all of it when the
 * process exits. A write per line (pino's default) cost a tenth of the main thread under load.
 */
export function bufferedStandardOutput() {
  return pino.destination({ dest: 1, minLength: 4096, periodicFlush: 250 });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * True for a request: its answer, below 500, writes no request lines ("incoming request", "request completed").
     * For lookups the network makes all the time, where those lines would cost more than the answer and drown the
     * log. They are still counted in the metrics; 5xx answers are logged as everywhere.
     */
    quietLog?: (request: FastifyRequest) => boolean;
  }
}

const isRead = (request: FastifyRequest) => request.method === 'GET' || request.method === 'HEAD';

/**
 * Fastify's request lines, except for the routes marked `quietLog` and, when the operator turned them off
 * (`LOG_REQUESTS=false`), for every read: then only writes and 5xx answers write them.
 */
export class RequestLogController extends LogController {
  constructor(private readonly logReads = true) {
    super();
  }

  private isQuiet(request: FastifyRequest): boolean {
    return (!this.logReads && isRead(request)) || request.routeOptions.config.quietLog?.(request) === true;
  }

  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (!this.isQuiet(request)) super.incomingRequest(request, reply);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error || reply.statusCode >= 500 || !this.isQuiet(request)) super.requestCompleted(error, request, reply);
  }
}
