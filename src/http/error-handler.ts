import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { isDatabaseUnreachable, isReadOnlyRefusal } from '../db/database.js';
import {
  ApiError,
  errorBody,
  MethodNotAllowedError,
  ServiceUnavailableError,
  TooManyRequestsError,
  ValidationError,
  fieldError,
  type FieldError,
} from '../core/errors.js';
import { isSecurityEvent } from './security-events.js';
import { SECURITY_HEADERS } from './security-headers.js';
import { validationErrorOf } from './validation.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The name of the request body in validation errors, such as `processFormDTO`. */
    objectName?: string;
    /** The body's own properties whose JSON `null` is a value, not an absent property (request-hygiene.ts). */
    keepsNull?: readonly string[];
    /** The paths the route really answers, when narrower than its URL pattern (other paths get 404, not 405). */
    pathPattern?: RegExp;
  }
}

/** The media type of the common error body. */
export const ERROR_MEDIA_TYPE = 'application/json;charset=UTF-8';

/** The `Retry-After` of a 503 while the database cannot be reached or takes no writes. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

const OBJECT_NAMES: Record<string, string> = {
  querystring: 'queryParameters',
  params: 'pathVariables',
  headers: 'headers',
};

function send(
  reply: FastifyReply,
  request: FastifyRequest,
  status: number,
  exception: string,
  message: string,
  errors?: FieldError[],
) {
  if (status === 401) reply.header('www-authenticate', 'Basic realm="registry"');
  return reply
    .status(status)
    .type(ERROR_MEDIA_TYPE)
    .send(errorBody(status, exception, message, request.url, errors));
}

/**
 * The API error a failure stands for: its own, the 400 of a schema violation, or the 400 of a body that is not
 * JSON; undefined for anything else, which the error handler answers (and logs when it is a 5xx).
 */
function toApiError(error: FastifyError, request: FastifyRequest): ApiError | undefined {
  if (error instanceof ApiError) return error;
  const bodyName = request.routeOptions.config.objectName ?? 'request';
  if (error.validation) {
    const context = error.validationContext ?? 'body';
    return validationErrorOf(context === 'body' ? bodyName : (OBJECT_NAMES[context] ?? context), error.validation);
  }
  if (
    error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
    error instanceof SyntaxError
  ) {
    return new ValidationError(bodyName, [
      fieldError({
        objectName: bodyName,
        field: '',
        code: 'typeMismatch',
        bindingFailure: true,
        defaultMessage:
          error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
            ? 'the request body is empty'
            : 'the request body is not valid JSON',
      }),
    ]);
  }
  return undefined;
}

async function errorHandler(fastify: FastifyInstance) {
  // A path that exists with other methods answers 405 with `Allow`, not 404.
  const routes: Array<{ method: string; path: RegExp }> = [];
  fastify.addHook('onRoute', (route) => {
    const path = route.config?.pathPattern ?? pathPattern(route.url);
    for (const method of [route.method].flat()) routes.push({ method, path });
  });
  const notFound = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = [...new Set(routes.filter((route) => route.path.test(path)).map((route) => route.method))];
    if (allowed.length > 0) {
      const error = new MethodNotAllowedError(request.method, allowed);
      reply.headers(error.headers);
      return send(reply, request, error.status, error.exception, error.message);
    }
    return send(reply, request, 404, 'NotFoundError', `No operation at ${request.method} ${path}`);
  };
  fastify.setNotFoundHandler(notFound);

  fastify.setErrorHandler((error: FastifyError, request, reply) => {
    // A path no operation has is a 404, whatever its body: no 415 or 400 for a body nobody would read.
    if (request.is404) return notFound(request, reply);
    const apiError = toApiError(error, request);
    if (apiError) {
      // A refusal by a limit on one address or user is a security event, logged and counted as it is answered.
      if (apiError instanceof TooManyRequestsError && isSecurityEvent(apiError.event)) {
        request.server.securityEvents.record(request, apiError.event, apiError.username);
      }
      reply.headers(apiError.headers);
      const errors = apiError instanceof ValidationError ? apiError.errors : undefined;
      return send(reply, request, apiError.status, apiError.exception, apiError.message, errors);
    }
    const readOnly = isReadOnlyRefusal(error);
    if (readOnly || isDatabaseUnreachable(error)) {
      request.log.error({ err: error }, readOnly ? 'database read-only' : 'database unreachable');
      const unavailable = new ServiceUnavailableError(
        readOnly
          ? 'The database takes no writes now (its primary is away); try again later'
          : 'The database is unavailable; try again later',
      );
      // A failover or a restart takes seconds: a client that waits this long mostly finds the database back.
      reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
      return send(reply, request, unavailable.status, unavailable.exception, unavailable.message);
    }
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed');
      return send(reply, request, status, 'InternalError', 'The request could not be completed');
    }
    // Framework errors with a client status (413, 415, 401 of malformed credentials, ...).
    return send(reply, request, status, error.code ? errorClassName(error.code) : 'RequestError', error.message);
  });
}

/** `/rest/api/processes/:identifier` matches `/rest/api/processes/<any one segment>`. */
function pathPattern(url: string): RegExp {
  const segments = url
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    );
  return new RegExp(`^${segments.join('/')}$`);
}

/**
 * The router's own errors, raised before any route or hook runs (a path that is not valid percent-encoded
 * UTF-8, or a path parameter beyond `maxParamLength`): a 400 in the common error body all the same, with the
 * header constants the hooks would have set.
 */
export function routerErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.headers(SECURITY_HEADERS);
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path parameter is too long' : 'The request path is not valid';
  return send(reply, request, 400, errorClassName(error.code), message);
}

/** `FST_ERR_CTP_BODY_TOO_LARGE` becomes `BodyTooLargeError`: the framework's code, readable. */
function errorClassName(code: string): string {
  const words = code
    .replace(/^FST_(ERR_)?(CTP_|BASIC_AUTH_)?/, '')
    .toLowerCase()
    .split('_');
  return `${words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('')}Error`;
}

export default fp(errorHandler, { name: 'error-handler' });
