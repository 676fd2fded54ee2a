import { PassThrough, Readable } from 'node:stream';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isPrintableAscii, isXmlText } from '../../src/core/xml-text.js';

/**
 * Every response of the test suite is checked against the OpenAPI description the service publishes: the
 * operation, the status and the media type must be described, and the body must match the described schema
 * with no property the description lacks. A violation fails the test during which the response was sent.
 */

type JsonObject = Record<string, unknown>;

interface Description {
  paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, { schema: unknown }> }> }>
  >;
  components?: { schemas?: Record<string, unknown> };
}

export interface ResponseViolation {
  /** `GET /rest/api/processes/{identifier} -> 200 application/json` */
  response: string;
  problem: string;
}

const COMPONENTS_ID = 'openapi-components';
const violations: ResponseViolation[] = [];

/** The violations recorded since the last check; the check of each test empties it. */
export function takeResponseViolations(): ResponseViolation[] {
  return violations.splice(0, violations.length);
}

export function formatViolations(list: readonly ResponseViolation[]): string {
  return [
    `${list.length} response(s) do not match the OpenAPI description (/v3/api-docs):`,
    ...list.map((violation) => `- ${violation.response}: ${violation.problem}`),
    'Fix the code, or the route schema the description is generated from (src/openapi describes every route).',
  ].join('\n');
}

/** Throws the violations recorded since the last check: after each test, so that the test fails (test/each-file.ts). */
export function failOnViolations() {
  const found = takeResponseViolations();
  if (found.length > 0) throw new Error(formatViolations(found));
}

/** The check's own copy of a schema: objects admit no property they do not list (except inside `allOf`). */
function closed(schema: unknown, inAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => closed(item, inAllOf));
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy: JsonObject = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, closed(value, key === 'allOf')]),
  );
  if ('properties' in copy && !('additionalProperties' in copy) && !inAllOf) copy.additionalProperties = false;
  if (typeof copy.$ref === 'string') copy.$ref = copy.$ref.replace('#/components/schemas/', `${COMPONENTS_ID}#/$defs/`);
  return copy;
}

export interface DescribedResponses {
  /** The problem with a response, or undefined when the description admits it. */
  check(
    request: { method: string; routeUrl: string | undefined },
    status: number,
    contentType: string | undefined,
    body: string,
  ): string | undefined;
  /** The operation's key in the description: `GET /rest/api/processes/{identifier}`. */
  label(
    request: { method: string; routeUrl: string | undefined },
    status: number,
    contentType: string | undefined,
  ): string;
}

/** A Fastify route URL as a path of the description: `:identifier` becomes `{identifier}`, no trailing slash. */
export function describedPath(routeUrl: string): string {
  const path = routeUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  return path.length > 1 ? path.replace(/\/$/, '') : path;
}

function bareType(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim().toLowerCase();
}

/** The checker of one description. */
export function describedResponses(description: Description): DescribedResponses {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajvFormats.default(ajv);
  // The service's own formats of text (src/http/validators.ts), which a response shares with its form.
  ajv.addFormat('xml-text', isXmlText);
  ajv.addFormat('printable-ascii', isPrintableAscii);
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: closed(description.components?.schemas ?? {}) });
  const validators = new Map<string, ValidateFunction>();
  const errorBody = description.components?.schemas?.ErrorBody;

  const label: DescribedResponses['label'] = (request, status, contentType) =>
    `${request.method} ${request.routeUrl === undefined ? '(no route)' : describedPath(request.routeUrl)} -> ${status} ${bareType(contentType) ?? '(no content type)'}`;

  function schemaFor(
    request: { method: string; routeUrl: string | undefined },
    status: number,
    type: string | undefined,
  ): { schema?: unknown; problem?: string } {
    if (request.routeUrl === undefined) {
      // No route matched: the not-found handler and the router's errors answer with the common error body.
      return status >= 400 ? { schema: errorBody } : { problem: `status ${status} without a route` };
    }
    const operation = description.paths[describedPath(request.routeUrl)]?.[request.method.toLowerCase()];
    if (!operation) return { problem: 'the operation is not in the description' };
    const response = operation.responses?.[String(status)];
    if (!response)
      return {
        problem: `status ${status} is not described; described: ${Object.keys(operation.responses ?? {}).join(', ')}`,
      };
    if (!response.content) return {};
    if (!type) return { problem: 'no Content-Type, but the description has a body' };
    const media = response.content[type];
    if (!media)
      return { problem: `media type ${type} is not described; described: ${Object.keys(response.content).join(', ')}` };
    return { schema: media.schema };
  }

  function validatorOf(key: string, schema: unknown): ValidateFunction {
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile(closed(schema) as JsonObject);
      validators.set(key, validate);
    }
    return validate;
  }

  return {
    label,
    check(request, status, contentType, body) {
      const type = bareType(contentType);
      const { schema, problem } = schemaFor(request, status, type);
      if (problem) return problem;
      if (schema === undefined)
        return body === '' ? undefined : `a body was sent, but the description says status ${status} has none`;
      let value: unknown;
      try {
        value = JSON.parse(body);
      } catch {
        return `the body is not JSON: ${body.slice(0, 200)}`;
      }
      const validate = validatorOf(label(request, status, contentType), schema);
      if (validate(value)) return undefined;
      return (validate.errors ?? [])
        .slice(0, 10)
        .map((error) => {
          const extra =
            error.keyword === 'additionalProperties'
              ? ` '${(error.params as { additionalProperty: string }).additionalProperty}'`
              : '';
          return `body${error.instancePath} ${error.message}${extra}`;
        })
        .join('; ');
    },
  };
}

const checkers = new WeakMap<FastifyInstance, DescribedResponses>();

function checkerOf(app: FastifyInstance): DescribedResponses {
  let checker = checkers.get(app);
  if (!checker) {
    checker = describedResponses(app.swagger() as unknown as Description);
    checkers.set(app, checker);
  }
  return checker;
}

function record(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, body: string) {
  const described = { method: request.method, routeUrl: request.routeOptions.url };
  const contentType = reply.getHeader('content-type') as string | undefined;
  try {
    const checker = checkerOf(app);
    const problem = checker.check(described, reply.statusCode, contentType, body);
    if (problem) violations.push({ response: checker.label(described, reply.statusCode, contentType), problem });
  } catch (error) {
    // A description that cannot be built or compiled must fail the test, not turn the response into a 500.
    violations.push({
      response: `${request.method} ${request.url} -> ${reply.statusCode}`,
      problem: `the check failed: ${(error as Error).message}`,
    });
  }
}

/** Checks every response of `app` (streamed ones when they end); call it before `app.ready()`. */
export function checkResponsesAgainstDescription(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.method === 'HEAD' || request.routeOptions.schema?.hide) return payload;
    if (payload instanceof Readable) {
      const chunks: Buffer[] = [];
      const copy = new PassThrough();
      copy.on('data', (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
      copy.on('end', () => record(app, request, reply, Buffer.concat(chunks).toString('utf8')));
      return payload.pipe(copy);
    }
    const body =
      payload === undefined || payload === null
        ? ''
        : Buffer.isBuffer(payload)
          ? payload.toString('utf8')
          : String(payload);
    record(app, request, reply, body);
    return payload;
  });
}
