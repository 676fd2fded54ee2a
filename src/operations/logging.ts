import type { FastifyServerOptions } from 'fastify';

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
