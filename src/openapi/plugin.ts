import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { hoistTitledSchemas } from './components.js';
import { JSON_MEDIA_TYPE } from '../http/media-types.js';
import { introductionOf, type Description } from './introduction.js';
import { BASIC_AUTH, describeOperation, SESSION_AUTH } from './operations.js';

const DESCRIPTION_PATH = '/v3/api-docs';
/** The methods of the API's operations, and PATCH, which none takes. */
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const NOT_ALLOWED_TAG = 'methods not allowed';
const DOCS_PATH = '/rest/resources/docs';

/** The docs page's policy: Swagger UI's own files only (its icons are data: URLs), nothing inline, no framing. */
const DOCS_CSP = {
  'default-src': "'self'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'font-src': "'self'",
  'connect-src': "'self'",
  'object-src': "'none'",
  'base-uri': "'none'",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
};

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const TAG_DESCRIPTIONS: Record<string, string> = {
  'access-point-providers': 'Access point providers: the entities that run access points (administration)',
  accessPoints: 'Access points: the servers that exchange the documents of participants',
  capabilities: 'Capabilities a process can require (administration of the catalogue)',
  'service-providers': 'Service providers: the entities whose customers are the participants (administration)',
  'transport-profiles': 'Transport profiles of access point endpoints (administration)',
  users: 'Credentials and roles of the callers (ADMIN only; every user changes its own password)',
  'sign-in-locks':
    'Usernames refused from a client address after too many failed password checks (read by ADMIN and REGISTRY_AUTHORITY, lifted by ADMIN)',
  'document-types': 'Document types of the catalogue, and the processes they belong to',
  organizations: 'Organizations registered in the service, across their participants',
  participants:
    "Participants: an organization's customer relation with one service provider. With NATIONAL_REGISTER_URL set, " +
    'a new ICD 0192 participant is refused (400 at `organizationIdentifier`) when Enhetsregisteret does not know its ' +
    'organization or has deleted it',
  'national-register':
    'Norwegian organizations (ICD 0192) against Enhetsregisteret: the participants whose organization it ' +
    'has deleted, does not know, or has not confirmed (a service provider sees its own)',
  processes: 'Business processes of the catalogue',
};

type OpenApiObject = Description & {
  tags?: Array<{ name: string; description: string }>;
  info: { description?: string };
};

/** Operation ids come from media type names, which two routes might share: the second one gets a number. */
function uniqueOperationIds(document: OpenApiObject): void {
  const seen = new Set<string>();
  for (const operation of Object.values(document.paths).flatMap((item) => Object.values(item))) {
    const base = operation.operationId;
    if (base === undefined) continue;
    let id = base;
    for (let n = 2; seen.has(id); n++) id = `${base}${n}`;
    operation.operationId = id;
    seen.add(id);
  }
}

/**
 * A method a described path does not take answers 405 with `Allow`: each such method is described on its
 * path, with that one response (marked `x-method-not-allowed`), so that clients see where 405 can come. They
 * share one tag, so that the docs page lists them apart from the resources' operations.
 */
function describeMethodsNotAllowed(document: OpenApiObject): void {
  document.tags = [
    ...(document.tags ?? []),
    {
      name: NOT_ALLOWED_TAG,
      description: 'Methods a path does not take: each answers 405, with `Allow` naming those it takes',
    },
  ];
  for (const [path, item] of Object.entries(document.paths)) {
    const taken = Object.keys(item);
    const [model] = Object.values(item);
    const allowed = taken.map((method) => method.toUpperCase()).join(', ');
    for (const method of HTTP_METHODS.filter((candidate) => !taken.includes(candidate))) {
      (item as Record<string, unknown>)[method] = {
        summary: `${method.toUpperCase()} is not allowed here`,
        operationId: `${method}${operationIdPath(path)}NotAllowed`,
        description: `This path takes ${allowed}; a ${method.toUpperCase()} request answers 405, with \`Allow\` naming those methods.`,
        tags: [NOT_ALLOWED_TAG],
        parameters: (model?.parameters ?? []).filter((parameter) => parameter.in === 'path'),
        security: [{}],
        responses: {
          405: {
            description: 'Method Not Allowed: this path does not take the method; `Allow` lists those it takes',
            headers: {
              Allow: { description: 'the methods this path takes', schema: { type: 'string', examples: [allowed] } },
            },
            content: { [JSON_MEDIA_TYPE]: { schema: { $ref: '#/components/schemas/ErrorBody' } } },
          },
        },
        'x-method-not-allowed': true,
      };
    }
  }
}

/** `/rest/api/processes/{identifier}` -> `RestApiProcessesIdentifier`. */
function operationIdPath(path: string): string {
  return path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

/** The last step of the description: named components, unique operation ids, one tag per resource, the introduction. */
function finish(openapiObject: unknown): OpenApiObject {
  const document = hoistTitledSchemas(openapiObject as OpenApiObject);
  uniqueOperationIds(document);
  const names = new Set(
    Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((operation) => operation.tags ?? [])),
  );
  document.tags = [...names]
    .sort()
    .map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `Operations on ${name}` }));
  document.info = { ...document.info, description: introductionOf(document) };
  // After the introduction: its tables and examples are about the operations, not the refusals.
  describeMethodsNotAllowed(document);
  return document;
}

/**
 * The machine-readable description of every route, generated by @fastify/swagger from the route schemas and
 * the route config, at `/v3/api-docs` (JSON and YAML), and the docs page rendering it at `/rest/resources/docs`.
 * Registered before the resources, so that it sees their routes.
 */
async function openapi(fastify: FastifyInstance) {
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Registry service',
        version,
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: '/', description: 'this service' }],
      components: {
        securitySchemes: {
          [BASIC_AUTH]: {
            type: 'http',
            scheme: 'basic',
            description: 'the credentials given by the national authority',
          },
          [SESSION_AUTH]: {
            type: 'http',
            scheme: 'bearer',
            description: 'a session of the web console, opened with POST /rest/api/sessions',
          },
        },
      },
      security: [{ [BASIC_AUTH]: [] }],
    },
    transform: describeOperation,
    transformObject: (documentObject) => finish((documentObject as { openapiObject: unknown }).openapiObject) as never,
  });

  fastify.get(DESCRIPTION_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(fastify.swagger()),
  );
  fastify.get(`${DESCRIPTION_PATH}.yaml`, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(fastify.swagger({ yaml: true })),
  );

  await fastify.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    staticCSP: DOCS_CSP,
    uiConfig: {
      layout: 'BaseLayout',
      docExpansion: 'list',
      deepLinking: true,
      defaultModelsExpandDepth: 0,
      displayRequestDuration: true,
    },
  });
}

export default fp(openapi, { name: 'openapi' });
