import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS, ROLES } from '../../src/http/auth.js';
import { hoistTitledSchemas } from '../../src/openapi/components.js';
import { rolesOf } from '../../src/openapi/operations.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { testDatabaseKind } from '../helpers/database.js';
import { expectSecurityHeaders } from '../helpers/assertions.js';
import { describedPath } from '../helpers/openapi-responses.js';
import { PROJECT_ROOT, registeredRoutes, testOutputDir } from '../helpers/openapi-tools.js';

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags?: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema: Record<string, unknown> }>;
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
  'x-roles'?: string[];
  'x-method-not-allowed'?: boolean;
}
interface OpenApi {
  openapi: string;
  info: { description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Record<string, unknown>>; securitySchemes: Record<string, unknown> };
}

const DOCS_ROUTES = /^\/(v3\/api-docs|rest\/resources\/docs)/;
/** The Peppol SMP interface and business card: Peppol's interface, described by its own specification. */
const PEPPOL_ROUTES = /^\/(:participantId|businesscard\/:participantId)(\/|$)/;
const run = promisify(execFile);

/** Every described method of every path, the 405 answers of methods a path does not take included. */
function describedMethods(description: OpenApi): Array<Operation & { method: string; path: string }> {
  return Object.entries(description.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ ...operation, method: method.toUpperCase(), path })),
  );
}

/** The operations the service serves. */
function operations(description: OpenApi): Array<Operation & { method: string; path: string }> {
  return describedMethods(description).filter((operation) => !operation['x-method-not-allowed']);
}

describe('the OpenAPI description', () => {
  let test: TestApp;
  let description: OpenApi;

  beforeAll(async () => {
    test = await startTestApp();
    const response = await test.app.inject({ url: '/v3/api-docs' });
    expect(response.statusCode).toBe(200);
    description = response.json();
  });
  afterAll(async () => {
    await test?.close();
  });

  it('is served as OpenAPI 3.1 in JSON and in YAML, outside the API and without credentials, with the security headers', async () => {
    const json = await test.app.inject({ url: '/v3/api-docs' });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expectSecurityHeaders(json);
    expect(description.openapi).toBe('3.1.0');
    const yaml = await test.app.inject({ url: '/v3/api-docs.yaml' });
    expect(yaml.statusCode).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/^application\/yaml/);
    expect(parseYaml(yaml.body)).toEqual(description);
    const withWrongCredentials = await test.app.inject({
      url: '/v3/api-docs',
      headers: { authorization: 'Basic d3Jvbmc6d3Jvbmc=' },
    });
    expect(withWrongCredentials.statusCode).toBe(200);
  });

  it('passes the Redocly linter with no error', async () => {
    // One folder per vitest project: both run at once.
    const file = join(testOutputDir(`openapi-${testDatabaseKind}`), 'openapi.json');
    writeFileSync(file, JSON.stringify(description, null, 2));
    const lint = await run(
      join(PROJECT_ROOT, 'node_modules/.bin/redocly'),
      ['lint', file, '--format=json', `--config=${join(PROJECT_ROOT, 'redocly.yaml')}`],
      {
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    ).catch((error: { stdout: string }) => error);
    const report = JSON.parse(lint.stdout) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; message: string; severity: string }>;
    };
    const warnings = report.problems
      .filter((problem) => problem.severity === 'warn')
      .map((problem) => `${problem.ruleId}: ${problem.message}`);
    console.log(
      `${file}: ${operations(description).length} operations; Redocly: ${report.totals.errors} errors, ${report.totals.warnings} warnings${warnings.length ? `\n${warnings.join('\n')}` : ''}`,
    );
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    // The one rule redocly.yaml turns off, for what the service serves.
    for (const operation of operations(description))
      expect(Object.keys(operation.responses).some((status) => status.startsWith('2'))).toBe(true);
  });

  it('describes every route the service serves, and no route that does not exist', () => {
    const served = new Set(
      registeredRoutes(test.app)
        .filter((route) => route.method !== 'HEAD' && !DOCS_ROUTES.test(route.url) && !PEPPOL_ROUTES.test(route.url))
        .map((route) => `${route.method} ${describedPath(route.url)}`),
    );
    const described = new Set(operations(description).map((operation) => `${operation.method} ${operation.path}`));
    expect([...described].sort()).toEqual([...served].sort());
    expect(served.size).toBeGreaterThanOrEqual(10);
    for (const operation of operations(description)) {
      const url = operation.path.replace(/\{([^}]+)\}/g, ':$1');
      expect(test.app.hasRoute({ method: operation.method, url }), `${operation.method} ${url}`).toBe(true);
    }
  });

  it('gives every API operation its roles, in the text and as x-roles, and its security requirement', () => {
    for (const operation of operations(description)) {
      const roles = operation['x-roles'] ?? [];
      expect(roles.length, operation.path).toBeGreaterThan(0);
      expect(roles.every((role) => [...ROLES, ANONYMOUS].includes(role as never))).toBe(true);
      for (const role of roles) expect(operation.description).toContain(role);
      const anonymous = roles.includes(ANONYMOUS);
      const signedIn = [{ basicAuth: [] }, { sessionAuth: [] }];
      expect(operation.security).toEqual(anonymous ? [{}, ...signedIn] : signedIn);
      expect(operation.operationId).toMatch(/^[a-z][A-Za-z]+$/);
    }
    expect(description.components.securitySchemes).toEqual({
      basicAuth: expect.objectContaining({ type: 'http', scheme: 'basic' }),
      sessionAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(description.paths['/rest/api/processes']?.get?.['x-roles']).toEqual([...ROLES, ANONYMOUS]);
    expect(description.paths['/rest/api/processes']?.post?.['x-roles']).toEqual(['ADMIN', 'REGISTRY_AUTHORITY']);
  });

  it('lists the error responses each operation can give, all with the common error body', () => {
    const processes = description.paths['/rest/api/processes'];
    const process = description.paths['/rest/api/processes/{identifier}'];
    const statuses = (operation: Operation | undefined) => Object.keys(operation?.responses ?? {});
    expect(statuses(processes?.get)).toEqual(['200', '304', '400', '401', '406', '408', '429', '500', '503']);
    expect(statuses(processes?.post)).toEqual([
      '201',
      '400',
      '401',
      '403',
      '406',
      '408',
      '409',
      '413',
      '415',
      '429',
      '500',
      '503',
    ]);
    expect(statuses(process?.get)).toEqual(['200', '304', '400', '401', '404', '406', '408', '429', '500', '503']);
    expect(statuses(process?.delete)).toEqual([
      '204',
      '400',
      '401',
      '403',
      '404',
      '406',
      '408',
      '409',
      '429',
      '500',
      '503',
    ]);
    expect(process?.delete?.responses['204']?.content).toBeUndefined();
    for (const operation of operations(description)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        expect(response.content, `${operation.method} ${operation.path} ${status}`).toEqual({
          'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } },
        });
      }
    }
  });

  it('names each operation as an action on its resource: one resource singular, a collection plural', () => {
    const named = (path: string, method: 'get' | 'post' | 'put' | 'delete') => {
      const operation = description.paths[path]?.[method];
      return `${operation?.summary} / ${operation?.operationId}`;
    };
    expect(named('/rest/api/processes', 'get')).toBe('find processes / findProcesses');
    expect(named('/rest/api/processes', 'post')).toBe('add process / addProcess');
    expect(named('/rest/api/processes/{identifier}', 'get')).toBe('get process / getProcess');
    expect(named('/rest/api/participants/{identifier}', 'get')).toBe('get participant / getParticipant');
    expect(named('/rest/api/participants/{identifier}/processes', 'get')).toBe(
      'get participant processes / getParticipantProcesses',
    );
    expect(named('/rest/api/capabilities/{identifier}', 'delete')).toBe('delete capability / deleteCapability');
    expect(named('/rest/api/accessPoints/{identifier}', 'put')).toBe('update access point / updateAccessPoint');
    expect(named('/rest/api/accessPoints', 'get')).toBe('find access points / findAccessPoints');
  });

  it('lists 405 on every path for each method it does not take, and the service answers exactly that', async () => {
    const methods = ['get', 'put', 'post', 'delete', 'patch'];
    for (const [path, item] of Object.entries(description.paths)) {
      expect(Object.keys(item).sort(), path).toEqual([...methods].sort());
      for (const operation of Object.values(item).filter((candidate) => candidate['x-method-not-allowed'])) {
        expect(Object.keys(operation.responses)).toEqual(['405']);
        expect(operation.responses['405']?.content).toEqual({
          'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } },
        });
      }
    }
    const refused = describedMethods(description).filter((operation) => operation['x-method-not-allowed']);
    expect(refused.length).toBeGreaterThan(20);
    for (const { method, path } of refused) {
      const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      const response = await test.app.inject({ method: method as 'GET', url });
      expect(response.statusCode, `${method} ${url}`).toBe(405);
      expect(response.headers.allow).toBeDefined();
    }
  });

  it('offers the versioned media types and application/json, and the array variant under the stream type', () => {
    const find = description.paths['/rest/api/processes']?.get?.responses['200']?.content ?? {};
    expect(Object.keys(find).sort()).toEqual([
      'application/json',
      'application/vnd.registry.processes.find.v1+json',
      'application/vnd.registry.processes.stream.v1+json',
    ]);
    expect(find['application/json']?.schema).toEqual({ $ref: '#/components/schemas/ProcessPage' });
    expect(find['application/vnd.registry.processes.stream.v1+json']?.schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Process' },
    });
    const add = description.paths['/rest/api/processes']?.post;
    expect(Object.keys(add?.requestBody?.content ?? {})).toEqual([
      'application/vnd.registry.processes.add.v1+json',
      'application/json',
    ]);
    expect(Object.keys(add?.responses['201']?.content ?? {})).toEqual([
      'application/vnd.registry.processes.add.v1+json',
      'application/json',
    ]);
  });

  it('describes the paging parameters with their bounds and defaults, as optional', () => {
    const parameters = description.paths['/rest/api/processes']?.get?.parameters ?? [];
    const byName = Object.fromEntries(parameters.map((parameter) => [parameter.name, parameter]));
    expect(byName.page).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 0, default: 0 },
    });
    expect(byName.size).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, default: 30 },
    });
    expect(byName.sort).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'array', items: { type: 'string' } },
    });
    const identifier = description.paths['/rest/api/processes/{identifier}']?.get?.parameters?.[0];
    expect(identifier).toMatchObject({
      in: 'path',
      name: 'identifier',
      required: true,
      schema: { type: 'string', format: 'uuid' },
    });
  });

  it('names the shared schemas: the qualified identifier string, the page envelope, the ICD pattern, the references', () => {
    const { schemas } = description.components;
    expect(schemas.QualifiedIdentifier).toMatchObject({
      type: 'string',
      examples: ['iso6523-actorid-upis::0192:987654325'],
    });
    expect((schemas.Process?.properties as Record<string, unknown>).qualifiedIdentifier).toEqual({
      $ref: '#/components/schemas/QualifiedIdentifier',
    });
    expect(schemas.QualifiedIdentifierInput).toMatchObject({ anyOf: [{ type: 'string' }, { type: 'object' }] });
    expect(schemas.ICD).toMatchObject({ type: 'string', pattern: '^[0-9]{4}$' });
    expect(schemas.ICD?.description).toMatch(/checked against the list the registry holds/);
    expect(Object.keys(schemas.ProcessPage?.properties as object)).toEqual([
      'content',
      'totalPages',
      'totalElements',
      'first',
      'last',
      'numberOfElements',
      'size',
      'number',
      'empty',
      'sort',
      'pageable',
    ]);
    expect(schemas.ProcessIdentifiable).toMatchObject({
      type: 'object',
      properties: { identifier: { type: 'string', format: 'uuid' } },
    });
    expect(JSON.stringify(description)).not.toContain('x-constraint');
  });

  it('introduces the API: vocabulary, credentials, roles, and a worked example per resource', () => {
    const text = description.info.description;
    for (const heading of [
      '## Vocabulary',
      '## Getting credentials',
      '## Roles',
      '## Operations and roles',
      '## Worked examples',
    ]) {
      expect(text).toContain(heading);
    }
    expect(text).toContain('| GET | `/rest/api/processes` | find processes | SP, APP, ADM, AUT, ANO |');
    const tags = new Set(operations(description).flatMap((operation) => operation.tags ?? []));
    for (const tag of tags) expect(text).toContain(`### ${tag}\n`);
    expect(text).toContain("curl -i -X GET 'http://localhost:8080/rest/api/processes?page=0&size=5'");
    expect(text).toContain(
      'HTTP/1.1 201 Created\nContent-Type: application/vnd.registry.processes.add.v1+json;charset=UTF-8',
    );
    expect(text).toMatch(
      /curl -i -u "\$USERNAME:\$PASSWORD" -X POST 'http:\/\/localhost:8080\/rest\/api\/processes' \\\n {2}-H 'Accept: application\/vnd\.registry\.processes\.add\.v1\+json'/,
    );
  });
});

describe('the roles of an access rule that depends on the request', () => {
  it('are asked for each identifier kind and described per kind when they differ', () => {
    const rule = (request: { params: { identifier: string } }) =>
      (request.params.identifier.includes('::') ? ['SERVICE_PROVIDER'] : ['SERVICE_PROVIDER', 'ADMIN']) as never;
    expect(rolesOf(rule as never, '/rest/api/participants/:identifier')).toEqual({
      roles: ['SERVICE_PROVIDER', 'ADMIN'],
      byIdentifierKind: [
        { kind: 'a UUID', roles: ['SERVICE_PROVIDER', 'ADMIN'] },
        { kind: 'a qualified identifier', roles: ['SERVICE_PROVIDER'] },
      ],
    });
    expect(rolesOf((() => ['ADMIN']) as never, '/rest/api/x/:identifier')).toEqual({ roles: ['ADMIN'] });
  });
});

describe('the named components of the description', () => {
  const thing = {
    type: 'object',
    title: 'Thing',
    properties: { name: { type: 'string', 'x-constraint': 'NotEmpty' } },
  };
  const media = (schema: object) => ({ content: { 'application/json': { schema } } });
  const document = {
    paths: {
      '/things': {
        post: {
          requestBody: media({
            type: 'object',
            title: 'Thing',
            properties: { name: { type: 'string' }, secret: { type: 'string' } },
          }),
          responses: {
            201: media({ type: 'object', properties: { one: thing, maybe: { ...thing, type: ['object', 'null'] } } }),
          },
        },
      },
    },
  };

  it('gives the response shape the title, a request-only shape <title>Input, and a nullable use anyOf with null', () => {
    const { paths, components } = hoistTitledSchemas(document);
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    expect(components.schemas).toEqual({
      Thing: { type: 'object', title: 'Thing', properties: { name: { type: 'string' } } },
      ThingInput: {
        type: 'object',
        title: 'Thing',
        properties: { name: { type: 'string' }, secret: { type: 'string' } },
      },
    });
    expect(paths['/things'].post.requestBody.content['application/json'].schema).toEqual(ref('ThingInput'));
    expect(paths['/things'].post.responses[201].content['application/json'].schema).toEqual({
      type: 'object',
      properties: { one: ref('Thing'), maybe: { anyOf: [ref('Thing'), { type: 'null' }] } },
    });
  });
});
