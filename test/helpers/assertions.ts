import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { SECURITY_HEADERS } from '../../src/http/security-headers.js';

/** An injected response, or one read from a raw socket. */
type AnyResponse = Pick<LightMyRequestResponse, 'statusCode' | 'headers' | 'body' | 'json'>;

export function expectSecurityHeaders(response: AnyResponse): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(response.headers[name], name).toBe(value);
}

/**
 * The headers of the SMP's read: the security headers but the "never keep this" trio, a validator, and the default
 * freshness (a cache may keep it but must ask again each time).
 */
export function expectSmpReadHeaders(response: AnyResponse): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    if (name === 'cache-control') expect(response.headers[name]).toBe('no-cache');
    else if (name === 'pragma' || name === 'expires') expect(response.headers[name], name).toBeUndefined();
    else expect(response.headers[name], name).toBe(value);
  }
  expect(response.headers.etag).toMatch(/^(W\/)?"[\w-]+"$/);
}

/**
 * The headers of the API's public read to a caller without credentials: the specification's constants (`no-store`
 * included: DECISIONS.md binds them for every response), and a validator.
 */
export function expectPublicReadHeaders(response: AnyResponse, vary?: string): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(response.headers[name], name).toBe(value);
  expect(response.headers.etag).toMatch(/^(W\/)?"[\w-]+"$/);
  expect(response.headers.vary).toBe(vary);
}

/** The common error body, with its status and an optional exact message. */
export function expectErrorBody(response: AnyResponse, status: number, message?: string | RegExp) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expectSecurityHeaders(response);
  const body = response.json();
  expect(body).toMatchObject({
    status,
    path: expect.any(String),
    exception: expect.any(String),
    error: expect.any(String),
  });
  expect(body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);
  expect(JSON.stringify(body)).not.toMatch(/\bat .+:\d+:\d+|SELECT |INSERT |node_modules/);
  if (message instanceof RegExp) expect(body.message).toMatch(message);
  else if (message !== undefined) expect(body.message).toBe(message);
  return body;
}

/**
 * The whole 400 body the specification shows for a form with one invalid text field, `field` of `objectName`
 * refused with `code`, as answered at `url`.
 */
export function expectSpecifiedValidationError(
  response: AnyResponse,
  url: string,
  error: { objectName: string; field: string; code: string; rejectedValue: unknown; defaultMessage: string },
) {
  const { objectName, field, code } = error;
  const message = `Validation failed for object='${objectName}'. Error count: 1`;
  expect(expectErrorBody(response, 400, message)).toEqual({
    timestamp: expect.any(String),
    status: 400,
    error: 'Bad Request',
    exception: 'ValidationError',
    message,
    path: url,
    errors: [
      {
        objectName,
        field,
        rejectedValue: error.rejectedValue,
        bindingFailure: false,
        code,
        codes: [`${code}.${objectName}.${field}`, `${code}.${field}`, `${code}.String`, code],
        defaultMessage: error.defaultMessage,
        arguments: [{ codes: [`${objectName}.${field}`, field], defaultMessage: field, code: field }],
      },
    ],
  });
}

/** The one 400 entry expected for a field, with the codes convention of docs/spec/DECISIONS.md. */
export function expectFieldError(
  body: { message: string; errors?: Array<Record<string, unknown>> },
  objectName: string,
  field: string,
  code: string,
  defaultMessage?: string,
) {
  const entry = body.errors?.find((error) => error.field === field && error.code === code);
  expect(entry, `${field} ${code} in ${JSON.stringify(body.errors)}`).toBeDefined();
  expect(entry).toMatchObject({ objectName, field, code, bindingFailure: expect.any(Boolean) });
  expect((entry as { codes: string[] }).codes.slice(0, 2)).toEqual([
    `${code}.${objectName}.${field}`,
    `${code}.${field}`,
  ]);
  expect((entry as { codes: string[] }).codes.at(-1)).toBe(code);
  expect((entry as { arguments: unknown[] }).arguments[0]).toEqual({
    codes: [`${objectName}.${field}`, field],
    defaultMessage: field,
    code: field,
  });
  if (defaultMessage !== undefined) expect(entry?.defaultMessage).toBe(defaultMessage);
  return entry as Record<string, unknown>;
}

/** The specification's 400 entry, field for field, of required field `field` (of type `typeName`) sent without a value. */
export const notNullEntry = (objectName: string, field: string, typeName: string) => ({
  objectName,
  field,
  rejectedValue: null,
  bindingFailure: false,
  code: 'NotNull',
  codes: [`NotNull.${objectName}.${field}`, `NotNull.${field}`, `NotNull.${typeName}`, 'NotNull'],
  defaultMessage: 'must not be null',
  arguments: [{ codes: [`${objectName}.${field}`, field], defaultMessage: field, code: field }],
});

/**
 * The middle of `values` (NaN when there are none): what the tests of fairness under a flood compare with, so that a
 * loaded machine slows both sides alike.
 */
export const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
