import type { FastifySchema, RouteOptions } from 'fastify';
import { ANONYMOUS, API_PREFIX, ROLES, type Access, type AccessRule } from '../http/auth.js';
import { JSON_MEDIA_TYPE, vendorMediaType } from '../http/media-types.js';
import { isRecord } from '../core/json.js';
import { ErrorBody } from '../core/schemas.js';

type Schema = Record<string, unknown>;

export const BASIC_AUTH = 'basicAuth';
/** A console session's token (`POST /rest/api/sessions`), accepted wherever Basic credentials are. */
export const SESSION_AUTH = 'sessionAuth';

/** The reason phrase of each error status an operation may answer, as the description words it. */
const ERROR_STATUSES: Record<number, string> = {
  400: 'Bad Request: a parameter or the body fails validation; `errors` lists every violation',
  401: 'Unauthorized: credentials missing (where required) or wrong',
  403: 'Forbidden: the credentials are valid, but their role may not call this operation',
  404: 'Not Found: no resource with this identifier (or not one the caller may see)',
  406: 'Not Acceptable: `Accept` names none of the media types of this operation',
  408: 'Request Timeout: the request did not arrive whole within the time limit; the connection is closed',
  409: 'Conflict: the change would duplicate a resource or break a reference that is still in use',
  413: 'Payload Too Large: the body is larger than the service accepts',
  415: 'Unsupported Media Type: the `Content-Type` of the body is not one this operation takes',
  429:
    'Too Many Requests: too many failed authentication attempts, too many requests in flight from the client address, ' +
    '(the change feed) too many waiting polls of the user, or (a new participant) too many organization numbers of the ' +
    'provider being looked up in the national register at once; see `Retry-After`',
  500: 'Internal Server Error: the request could not be completed',
  503: 'Service Unavailable: the database cannot be reached; try again later',
};

/** A public read (docs/design/smp.md, Caching): an anonymous caller's copy is current. */
const NOT_MODIFIED: Schema = {
  type: 'null',
  description:
    "Not Modified: without credentials, `If-None-Match` names the answer's `ETag` (or is `*`); no body. " +
    'Answers to anonymous callers carry an `ETag` and `Cache-Control` (`PUBLIC_MAX_AGE_SECONDS`) and vary on `Accept` and `Authorization`',
};

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
const COLLECTION_ACTIONS = new Set(['find', 'stream']);
const SINGLE_RESOURCE_ACTIONS = new Set(['get', 'add', 'update', 'delete', 'transfer']);
const METHOD_ACTIONS: Record<string, string> = { GET: 'get', POST: 'add', PUT: 'update', DELETE: 'delete' };

/** Two identifiers of each kind, to learn what an access rule that depends on the request allows. */
const PROBES = [
  { kind: 'a UUID', identifier: '00000000-0000-4000-8000-000000000000' },
  { kind: 'a qualified identifier', identifier: 'iso6523-actorid-upis::0192:987654325' },
] as const;

interface RolesOf {
  /** Every role that may call the operation in some case. */
  roles: Access[];
  /** When the rule depends on the kind of identifier in the path: what each kind admits. */
  byIdentifierKind?: Array<{ kind: string; roles: readonly Access[] }>;
}

function pathParameterNames(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1] as string);
}

/** The roles of an access rule; a rule of the request is asked with each identifier kind in every path parameter. */
export function rolesOf(rule: AccessRule, url: string): RolesOf {
  if (typeof rule !== 'function') return { roles: [...rule] };
  const names = pathParameterNames(url);
  const everyone: readonly Access[] = [...ROLES, ANONYMOUS];
  const byIdentifierKind = PROBES.map(({ kind, identifier }): { kind: string; roles: readonly Access[] } => {
    const params = Object.fromEntries(names.map((name) => [name, identifier]));
    const request = { params, query: {}, headers: {}, url: url.replace(/:([A-Za-z0-9_]+)/g, identifier) };
    try {
      // A probe, not a request: the rules read its path parameters only.
      return { kind, roles: rule(request as never) };
    } catch {
      return { kind, roles: everyone };
    }
  });
  const roles = [...new Set(byIdentifierKind.flatMap((entry) => entry.roles))];
  const differ = new Set(byIdentifierKind.map((entry) => [...entry.roles].sort().join())).size > 1;
  return differ ? { roles, byIdentifierKind } : { roles };
}

/** The error statuses an operation can answer, from what it declares: access, parameters, body, media types. */
function errorStatusesOf(
  route: Pick<RouteOptions, 'url' | 'config'> & { method: string; schema?: FastifySchema },
  roles: readonly Access[],
): number[] {
  const schema = route.schema ?? {};
  // Every request must arrive in time, and every client address has a cap of requests in flight.
  const statuses = new Set<number>([408, 429, 500]);
  const api = route.url.startsWith(API_PREFIX);
  if (schema.params || schema.querystring || schema.body || schema.headers || api) statuses.add(400);
  if (route.config?.access) {
    statuses.add(401);
    if (!ROLES.every((role) => roles.includes(role))) statuses.add(403);
  }
  if (pathParameterNames(route.url).length > 0) statuses.add(404);
  if (route.config?.mediaTypes) statuses.add(406);
  if (api && WRITE_METHODS.has(route.method)) statuses.add(409);
  if (BODY_METHODS.has(route.method)) statuses.add(413).add(415);
  if (api) statuses.add(503);
  return [...statuses].sort();
}

/** An error response: the common error body, or the schema the route declares for that status. */
function errorResponse(status: number, declared: unknown): Schema {
  return {
    description: ERROR_STATUSES[status] ?? 'Error',
    content: { [JSON_MEDIA_TYPE]: { schema: declared ?? ErrorBody } },
  };
}

/** `accessPoints` and `access-points` are the words `access points`. */
function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** `processes` -> `process`, `capabilities` -> `capability`, `access points` -> `access point`. */
function singular(words: string[]): string[] {
  const last = words.at(-1) ?? '';
  const one = last.endsWith('ies')
    ? `${last.slice(0, -3)}y`
    : last.endsWith('sses')
      ? last.slice(0, -2)
      : last.replace(/s$/, '');
  return [...words.slice(0, -1), one];
}

/**
 * The operation as an action on its resource, from the action its media type names and the resource of its
 * path: `find processes`, `get process`, `add participant`, `transfer participant`; an operation on a part
 * of one resource (`participants.processes`) is the method's action on it: `get participant processes`.
 */
function actionOf(mediaType: string | undefined, method: string, url: string): string[] | undefined {
  const tag = tagOf(url);
  if (!mediaType || !tag) return undefined;
  const action = mediaType.slice(mediaType.lastIndexOf('.') + 1);
  const resource = wordsOf(tag);
  if (COLLECTION_ACTIONS.has(action)) return [action, ...resource];
  if (SINGLE_RESOURCE_ACTIONS.has(action)) return [action, ...singular(resource)];
  return [METHOD_ACTIONS[method] ?? method.toLowerCase(), ...singular(resource), ...wordsOf(action)];
}

function summaryOf(mediaType: string | undefined, method: string, url: string): string {
  return actionOf(mediaType, method, url)?.join(' ') ?? `${method} ${url}`;
}

function operationIdOf(mediaType: string | undefined, method: string, url: string): string {
  const words =
    actionOf(mediaType, method, url) ?? `${method} ${url.replace(/:/g, 'by ')}`.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words
    .map((word, index) => (index === 0 ? word.toLowerCase() : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('');
}

/** The resource of an API path: its first segment after `/rest/api/`. */
function tagOf(url: string): string | undefined {
  if (!url.startsWith(API_PREFIX)) return undefined;
  return url.slice(API_PREFIX.length).split('/')[0] || undefined;
}

function rolesText(roles: RolesOf): string {
  const named = (list: readonly Access[]) =>
    list.map((role) => (role === ANONYMOUS ? 'ANONYMOUS (no credentials)' : role)).join(', ');
  const lines = [`**Roles:** ${named(roles.roles)}.`];
  for (const entry of roles.byIdentifierKind ?? []) lines.push(`- with ${entry.kind}: ${named(entry.roles)}`);
  return lines.join('\n');
}

/** Requests of a page need not repeat the defaults: a parameter with a default is optional. */
function withOptionalDefaults(querystring: unknown): unknown {
  if (!isRecord(querystring)) return querystring;
  const { properties, required } = querystring;
  if (!isRecord(properties) || !Array.isArray(required)) return querystring;
  return {
    ...querystring,
    required: required.filter((name) => !(isRecord(properties[name]) && 'default' in properties[name])),
  };
}

/** The array variant of a find operation: the items of the page's `content`. */
function streamSchemaOf(pageSchema: unknown): Schema | undefined {
  const content = isRecord(pageSchema) && isRecord(pageSchema.properties) ? pageSchema.properties.content : undefined;
  const items = isRecord(content) ? content.items : undefined;
  return items ? { type: 'array', items } : undefined;
}

/** The response schemas a route declares, by status. */
const declaredResponses = (schema: FastifySchema | undefined): Record<string, unknown> =>
  isRecord(schema?.response) ? schema.response : {};

function successResponses(
  route: { method: string; schema?: FastifySchema; config?: RouteOptions['config'] },
  types: string[],
): Record<string, Schema> {
  const declared = declaredResponses(route.schema);
  const responses: Record<string, Schema> = {};
  for (const [status, schema] of Object.entries(declared)) {
    if (!/^2/.test(status)) continue;
    const content: Record<string, { schema: unknown }> = Object.fromEntries(types.map((type) => [type, { schema }]));
    const stream = route.config?.streamMediaType ? streamSchemaOf(schema) : undefined;
    if (stream && route.config?.streamMediaType)
      content[vendorMediaType(route.config.streamMediaType)] = { schema: stream };
    responses[status] = {
      description: isRecord(schema) && typeof schema.description === 'string' ? schema.description : 'Success',
      content,
    };
  }
  if (Object.keys(responses).length === 0) {
    // No body: a delete answers 204, anything else (a transfer) 200.
    responses[route.method === 'DELETE' ? '204' : '200'] = { type: 'null', description: 'Success, no body' };
  }
  return responses;
}

interface TransformInput {
  schema: FastifySchema | undefined;
  url: string;
  route: RouteOptions;
}

/**
 * What @fastify/swagger describes of one route: its route schemas as they are, plus what the route config
 * says: media types, roles (text and `x-roles`), security, and the error responses it can answer.
 */
export function describeOperation({ schema, url, route }: TransformInput): { schema: Schema; url: string } {
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
  const own: FastifySchema = schema ?? {};
  if (own.hide) return { schema: { ...own }, url };
  const mediaTypes = route.config?.mediaTypes ?? [];
  const types = [...mediaTypes.map(vendorMediaType), JSON_MEDIA_TYPE];
  const access = route.config?.access;
  const roles = access ? rolesOf(access, url) : undefined;
  const description = [own.description, roles && rolesText(roles)].filter(Boolean).join('\n\n');
  const declared = declaredResponses(own);
  const errors = new Set([
    ...errorStatusesOf({ url, method, schema: own, config: route.config }, roles?.roles ?? []),
    ...Object.keys(declared)
      .filter((status) => /^[45]\d\d$/.test(status))
      .map(Number),
  ]);
  const tag = tagOf(url);

  const described: Schema = {
    ...own,
    summary: own.summary ?? summaryOf(mediaTypes[0], method, url),
    operationId: own.operationId ?? operationIdOf(mediaTypes[0], method, url),
    ...(description ? { description } : {}),
    ...(own.tags || !tag ? {} : { tags: [tag] }),
    response: {
      ...successResponses({ method, schema: own, config: route.config }, types),
      ...(method === 'GET' && roles?.roles.includes(ANONYMOUS) ? { 304: NOT_MODIFIED } : {}),
      ...Object.fromEntries(
        [...errors].sort().map((status) => [String(status), errorResponse(status, declared[status])]),
      ),
    },
  };
  if (own.querystring) described.querystring = withOptionalDefaults(own.querystring);
  if (own.body) described.body = { content: Object.fromEntries(types.map((type) => [type, { schema: own.body }])) };
  if (roles) {
    described['x-roles'] = roles.roles;
    const signedIn = [{ [BASIC_AUTH]: [] }, { [SESSION_AUTH]: [] }];
    described.security = roles.roles.includes(ANONYMOUS) ? [{}, ...signedIn] : signedIn;
  }
  // `/rest/api/processes/` is the same operation as `/rest/api/processes`, which is how clients call it.
  return { schema: described, url: url.length > 1 ? url.replace(/\/$/, '') : url };
}
