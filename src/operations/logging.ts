import {
  LogController,
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import pino from 'pino';

type LoggerOptions = Exclude<NonNullable<FastifyServerOptions['logger']>, boolean>;

const CENSOR = '[REDACTED]';
const REQUEST_HEADER_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'req.headers["proxy-authorization"]'];
/**
 * What never reaches a log line, whoever logs it: credentials in headers and any `password` property up to
 * three levels down (request bodies, user forms, errors carrying them).
 */
const REDACTED_PATHS = [
  ...REQUEST_HEADER_PATHS,
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'password',
  '*.password',
  '*.*.password',
  '*.*.*.password',
];

/** A failing statement's error, as both drivers throw it: a SQLSTATE, and PGlite's (and, see postgres.ts, our) `query`. */
interface StatementError extends Error {
  code: string;
  severity: string;
  routine?: string;
  constraint?: string;
  table?: string;
  column?: string;
  query?: string;
}

const isStatementError = (error: unknown): error is StatementError =>
  error instanceof Error && 'severity' in error && 'code' in error && typeof error.code === 'string';

/**
 * An error as it is logged. A failing statement keeps what says what failed and where (SQLSTATE, the SQL text,
 * the server's routine, constraint, table, column, the stack's frames) and loses what holds the values it was given
 * (personal data): its message (replaced by one naming the SQLSTATE) and the stack's first line (`invalid input syntax ...: "<value>"`), `detail`
 * (`Failing row contains (...)`), `where`, and PGlite's `params`.
 */
function serializeError(error: Error): { type: string; message: string; stack: string; [key: string]: unknown } {
  if (!isStatementError(error)) return pino.stdSerializers.err(error);
  const { code, severity, routine, constraint, table, column, query, stack = '' } = error;
  return {
    type: error.constructor.name,
    message: `statement failed with SQLSTATE ${code}`,
    sqlState: code,
    severity,
    routine,
    constraint,
    table,
    column,
    sql: query,
    stack: stack
      .split('\n')
      .filter((line) => line.trimStart().startsWith('at '))
      .join('\n'),
  };
}

/** JSON lines (pino's format) with the request id under `reqId`, the redactions above, and errors without values. */
export function loggerOptions(level: string, stream?: LoggerOptions['stream']): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: CENSOR },
    serializers: { err: serializeError },
    ...(stream ? { stream } : {}),
  };
}

/** The process's own lines, before the application's logger exists or beside it: the same JSON lines to the same output. */
export function processLogger(level: string, output: LogOutput): pino.Logger {
  return pino(loggerOptions(level), output);
}

/** For the line of a start that failed: standard error, written at once (the process exits next), whatever LOG_LEVEL says. */
export function startFailureLog(): pino.Logger {
  return pino(loggerOptions('info'), pino.destination({ dest: 2, sync: true }));
}

/** What the log writes to, and how a caller writes a line of its own after the lines logged before it. */
export interface LogOutput {
  write(line: string): void;
}

const BLOCK_CHARACTERS = 4096;
const FLUSH_EVERY_MS = 250;

/**
 * Standard output, written in blocks of 4 KiB or more, at the latest every quarter of a second, and all of it when the
 * process exits. A write per line (pino's default) cost a tenth of the main thread under load. The lines wait here
 * and each block is written at once (sonic-boom, synchronous, which retries a full pipe): sonic-boom's own buffer
 * measures its whole pending text on every line (`Buffer.byteLength`), which was a tenth of a cached read's busy time.
 */
export function bufferedStandardOutput(): LogOutput {
  const output = pino.destination({ dest: 1, sync: true });
  let lines: string[] = [];
  let characters = 0;
  const flush = () => {
    if (lines.length === 0) return;
    const block = lines.join('');
    lines = [];
    characters = 0;
    output.write(block);
  };
  setInterval(flush, FLUSH_EVERY_MS).unref();
  process.on('exit', flush);
  return {
    write(line) {
      lines.push(line);
      characters += line.length;
      if (characters >= BLOCK_CHARACTERS) flush();
    },
  };
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
 *
 * The lines are Fastify's, written by a sibling of the request's logger without its redaction: their objects are
 * the serialized request and reply (method, URL, addresses, status), which hold no header and no body, and searching
 * them for the redacted paths cost more than writing them (4.4 µs against 1.8 µs a line). The test of the log lines
 * fails if a credential ever reaches them. A request that errored is logged by Fastify's own line, redacted in full:
 * its error may carry anything.
 */
export class RequestLogController extends LogController {
  private readonly lineLoggers = new WeakMap<FastifyBaseLogger, FastifyBaseLogger>();

  constructor(private readonly logReads = true) {
    super();
  }

  /** The request lines' logger of the request's server: same level, output and serializers as its own, no redaction. */
  private linesOf(request: FastifyRequest): FastifyBaseLogger {
    const serverLog = request.server.log;
    let lines = this.lineLoggers.get(serverLog);
    if (!lines) {
      lines = serverLog.child({}, { redact: { paths: [] } });
      this.lineLoggers.set(serverLog, lines);
    }
    return lines;
  }

  private isQuiet(request: FastifyRequest): boolean {
    return (!this.logReads && isRead(request)) || request.routeOptions.config.quietLog?.(request) === true;
  }

  override incomingRequest(request: FastifyRequest): void {
    if (!this.isQuiet(request)) this.linesOf(request).info({ reqId: request.id, req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) super.requestCompleted(error, request, reply);
    else if (reply.statusCode >= 500 || !this.isQuiet(request)) {
      this.linesOf(request).info(
        { reqId: request.id, res: reply, responseTime: reply.elapsedTime },
        'request completed',
      );
    }
  }
}

/**
 * A request's own logger (`request.log`), made when first used. Fastify makes one per request to bind its id, and most
 * requests log nothing of their own (their request lines are written above), so a child logger a request cost some
 * 2 % of a participant read's main thread.
 */
export const requestLoggerWhenUsed: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) => {
  let made: FastifyBaseLogger | undefined;
  const child = () => (made ??= logger.child(bindings, options));
  return {
    get level() {
      return child().level;
    },
    set level(level) {
      child().level = level;
    },
    fatal: (...args: Parameters<FastifyBaseLogger['fatal']>) => child().fatal(...args),
    error: (...args: Parameters<FastifyBaseLogger['error']>) => child().error(...args),
    warn: (...args: Parameters<FastifyBaseLogger['warn']>) => child().warn(...args),
    info: (...args: Parameters<FastifyBaseLogger['info']>) => child().info(...args),
    debug: (...args: Parameters<FastifyBaseLogger['debug']>) => child().debug(...args),
    trace: (...args: Parameters<FastifyBaseLogger['trace']>) => child().trace(...args),
    silent: (...args: Parameters<FastifyBaseLogger['silent']>) => child().silent(...args),
    child: (childBindings, childOptions) => child().child(childBindings, childOptions),
  };
};
