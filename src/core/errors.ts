import { STATUS_CODES } from 'node:http';

/** The `code` of what was thrown: a SQLSTATE of either database driver, a Node system error's (`EEXIST`); undefined when none. */
export function errorCodeOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** One violated constraint, in the shape of the specification's `errors` entries. */
export interface FieldError {
  objectName: string;
  field: string;
  rejectedValue: unknown;
  bindingFailure: boolean;
  code: string;
  codes: string[];
  defaultMessage: string;
  arguments: unknown[];
}

export interface FieldErrorInput {
  objectName: string;
  field: string;
  code: string;
  defaultMessage: string;
  rejectedValue?: unknown;
  bindingFailure?: boolean;
  /** The field's type name in message codes: `String`, `ContactForm`, ... */
  typeName?: string;
  /** The constraint's own arguments, after the field itself (for a size: max, min). */
  constraintArguments?: unknown[];
}

/** Builds an entry with the message codes and arguments convention of docs/spec/DECISIONS.md. */
export function fieldError(input: FieldErrorInput): FieldError {
  const { objectName: o, field: f, code: c } = input;
  return {
    objectName: o,
    field: f,
    rejectedValue: input.rejectedValue ?? null,
    bindingFailure: input.bindingFailure ?? false,
    code: c,
    codes: [`${c}.${o}.${f}`, `${c}.${f}`, `${c}.${input.typeName ?? 'String'}`, c],
    defaultMessage: input.defaultMessage,
    arguments: [{ codes: [`${o}.${f}`, f], defaultMessage: f, code: f }, ...(input.constraintArguments ?? [])],
  };
}

/** An error the API reports with its status in the common error body; `exception` is the class name. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get exception(): string {
    return this.constructor.name;
  }
}

export class ValidationError extends ApiError {
  constructor(
    readonly objectName: string,
    readonly errors: FieldError[],
  ) {
    super(400, `Validation failed for object='${objectName}'. Error count: ${errors.length}`);
  }

  static of(objectName: string, entries: Omit<FieldErrorInput, 'objectName'>[]): ValidationError {
    return new ValidationError(
      objectName,
      entries.map((entry) => fieldError({ objectName, ...entry })),
    );
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string) {
    super(404, message);
  }

  /** The 404 of an access point, document type, process or any other resource found by UUID. */
  static instance(identifier: string): NotFoundError {
    return new NotFoundError(`Unable to find instance with identifier '${identifier}'.`);
  }

  /** The 404 of a participant or organization, also given for another provider's participant. */
  static organization(qualifiedIdentifier: string): NotFoundError {
    return new NotFoundError(`Couldn't find organization for ${qualifiedIdentifier}`);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string) {
    super(409, message);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'Full authentication is required to access this resource') {
    super(401, message, { 'www-authenticate': 'Basic realm="registry"' });
  }
}

export class ForbiddenError extends ApiError {
  constructor(message = 'Access is denied') {
    super(403, message);
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(method: string, allowed: string[]) {
    super(405, `Request method '${method}' is not supported here; allowed: ${allowed.join(', ')}`, {
      allow: allowed.join(', '),
    });
  }
}

export class NotAcceptableError extends ApiError {
  constructor(accepted: string[]) {
    super(406, `No acceptable representation; this operation produces ${accepted.join(', ')}`);
  }
}

export class UnsupportedMediaTypeError extends ApiError {
  constructor(contentType: string | undefined, accepted: string[]) {
    super(415, `Content-Type '${contentType ?? ''}' is not supported; this operation takes ${accepted.join(', ')}`);
  }
}

export class TooManyRequestsError extends ApiError {
  /** Who was refused, when the limit knows (a sign-in's username); answered, the refusal is logged as a security event. */
  username?: string;

  constructor(
    retryAfterSeconds: number,
    message = 'Too many failed attempts; try again later',
    /** The security event the refusal is logged and counted as (http/security-events.ts). */
    readonly event?: string,
  ) {
    super(429, message, { 'retry-after': String(retryAfterSeconds) });
  }
}

export class ServiceUnavailableError extends ApiError {
  constructor(message = 'The service is temporarily unavailable') {
    super(503, message);
  }
}

export interface ErrorBody {
  timestamp: string;
  status: number;
  error: string;
  exception: string;
  message: string;
  path: string;
  description?: string;
  errors?: FieldError[];
}

export function errorBody(
  status: number,
  exception: string,
  message: string,
  url: string,
  errors?: FieldError[],
): ErrorBody {
  return {
    timestamp: new Date().toISOString().slice(0, 23),
    status,
    error: STATUS_CODES[status] ?? 'Error',
    exception,
    message,
    path: url.split('?')[0] ?? url,
    ...(errors ? { errors } : {}),
  };
}
