import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { EVERYONE } from '../../src/http/auth.js';
import { pageOf, PageQuery, pageRequest, PageSchema, type PageParameters } from '../../src/core/paging.js';
import { sendJsonArray } from '../../src/http/streaming.js';
import { useTestApp } from '../helpers/app.js';
import { openTestDatabase } from '../helpers/database.js';
import {
  checkResponsesAgainstDescription,
  describedResponses,
  failOnViolations,
  formatViolations,
  takeResponseViolations,
} from '../helpers/openapi-responses.js';

const Item = Type.Object({ name: Type.String() }, { title: 'ZzItem' });
const ItemWithSecret = Type.Object({ name: Type.String(), secret: Type.String() });
const STREAM_TYPE = 'application/vnd.registry.zz-items.stream.v1+json';

/** Routes that answer what their schemas do not say, as a careless change to a resource would. */
async function appWithLyingRoutes(db: Database): Promise<App> {
  const app = await buildApp({ db });
  // Untyped on purpose: these handlers answer what their schemas forbid.
  const untyped = app as unknown as FastifyInstance;
  const config = { access: EVERYONE };
  untyped.get<{ Querystring: PageParameters }>(
    '/rest/api/zz-items',
    {
      schema: { querystring: Type.Object(PageQuery), response: { 200: PageSchema(Item, 'ZzItemPage') } },
      config: { ...config, mediaTypes: ['zz-items.find'], streamMediaType: 'zz-items.stream' },
    },
    async (request, reply) => {
      async function* batches() {
        yield [{ name: 'one', secret: 's1' }];
      }
      if (request.wantsStream) return sendJsonArray(reply, ItemWithSecret, batches());
      // A body serialized by hand bypasses the response schema.
      const page = pageOf([{ name: 'one', secret: 's1' }], 1, pageRequest(request.query, {}, 'name'));
      return reply.type('application/json;charset=UTF-8').send(JSON.stringify(page));
    },
  );
  untyped.get<{ Params: { identifier: string } }>(
    '/rest/api/zz-items/:identifier',
    {
      schema: { params: Type.Object({ identifier: Type.String() }), response: { 200: Item } },
      config: { ...config, mediaTypes: ['zz-items.get'] },
    },
    async (request, reply) => {
      if (request.params.identifier === 'teapot') return reply.status(418).send({ name: 'tea' });
      if (request.params.identifier === 'nameless') return reply.type('application/json').send('{}');
      return { name: 'two' };
    },
  );
  checkResponsesAgainstDescription(app);
  await app.ready();
  return app;
}

describe('the check of every response against the description', () => {
  let db: Database;
  let app: App;

  beforeAll(async () => {
    db = await openTestDatabase();
    app = await appWithLyingRoutes(db);
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('fails a body with a property the description lacks, naming the operation, status, media type and property', async () => {
    const response = await app.inject({ url: '/rest/api/zz-items' });
    expect(response.statusCode).toBe(200);
    const violations = takeResponseViolations();
    expect(violations).toHaveLength(1);
    expect(violations[0]?.response).toBe('GET /rest/api/zz-items -> 200 application/json');
    expect(violations[0]?.problem).toBe("body/content/0 must NOT have additional properties 'secret'");
    expect(formatViolations(violations)).toContain('GET /rest/api/zz-items -> 200 application/json: body');
  });

  it('fails a body that misses what the description requires', async () => {
    await app.inject({ url: '/rest/api/zz-items/nameless' });
    expect(takeResponseViolations()[0]?.problem).toBe("body must have required property 'name'");
  });

  it('checks a streamed array item by item, once the stream has ended', async () => {
    const response = await app.inject({ url: '/rest/api/zz-items', headers: { accept: STREAM_TYPE } });
    expect(response.json()).toEqual([{ name: 'one', secret: 's1' }]);
    const violations = takeResponseViolations();
    expect(violations.map((violation) => violation.response)).toEqual([`GET /rest/api/zz-items -> 200 ${STREAM_TYPE}`]);
    expect(violations[0]?.problem).toBe("body/0 must NOT have additional properties 'secret'");
  });

  it('fails a status the description does not list for the operation', async () => {
    await app.inject({ url: '/rest/api/zz-items/teapot' });
    const [violation] = takeResponseViolations();
    expect(violation?.response).toBe(
      'GET /rest/api/zz-items/{identifier} -> 418 application/vnd.registry.zz-items.get.v1+json',
    );
    expect(violation?.problem).toMatch(/^status 418 is not described; described: 200, 304, 400, 401, 404, 406/);
  });

  it('admits what the description says, errors and the not-found handler included', async () => {
    const ok = await app.inject({ url: '/rest/api/zz-items/abc', headers: { accept: 'application/json' } });
    expect(ok.json()).toEqual({ name: 'two' });
    const notAcceptable = await app.inject({ url: '/rest/api/zz-items/abc', headers: { accept: 'text/csv' } });
    expect(notAcceptable.statusCode).toBe(406);
    const noRoute = await app.inject({ url: '/rest/api/nothing-here' });
    expect(noRoute.statusCode).toBe(404);
    const docs = await app.inject({ url: '/rest/resources/docs/static/index.css' });
    expect(docs.statusCode).toBe(200);
    expect(takeResponseViolations()).toEqual([]);
  });
});

describe('startTestApp', () => {
  // useTestApp starts its app with startTestApp.
  const test = useTestApp();

  it('checks the responses of the suite against the description the service publishes', async () => {
    const published = test.app.swagger() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const operation = published.paths['/rest/api/processes/{identifier}']?.get;
    expect(operation?.responses['404']).toBeDefined();
    // The check reads the published description: a status it loses is a status the suite may not see.
    delete operation?.responses['404'];
    const response = await test.app.inject({ url: '/rest/api/processes/00000000-0000-4000-8000-000000000000' });
    expect(response.statusCode).toBe(404);
    // After each test the recorded violations are thrown, which fails the test that caused them.
    expect(() => failOnViolations()).toThrow(
      /^1 response\(s\) do not match the OpenAPI description \(\/v3\/api-docs\):\n- GET \/rest\/api\/processes\/\{identifier\} -> 404 application\/json: status 404 is not described/,
    );
    expect(takeResponseViolations()).toEqual([]);
  });
});

describe('the checker of one description', () => {
  const checker = describedResponses({
    paths: {
      '/rest/api/things/{identifier}': {
        delete: { responses: { 204: {} } },
        get: {
          responses: {
            200: {
              content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } } } },
            },
          },
        },
      },
    },
  });
  const route = (method: string) => ({ method, routeUrl: '/rest/api/things/:identifier' });

  it('names what is wrong: a body where none is described, an undescribed media type, a body that is no JSON', () => {
    expect(checker.check(route('DELETE'), 204, undefined, '')).toBeUndefined();
    expect(checker.check(route('DELETE'), 204, 'application/json', '{}')).toBe(
      'a body was sent, but the description says status 204 has none',
    );
    expect(checker.check(route('GET'), 200, 'text/html; charset=utf-8', '<p>')).toBe(
      'media type text/html is not described; described: application/json',
    );
    expect(checker.check(route('GET'), 200, 'application/json', '{"name":')).toBe('the body is not JSON: {"name":');
    expect(checker.check(route('GET'), 200, 'application/json;charset=UTF-8', '{"name":"a"}')).toBeUndefined();
    expect(checker.check(route('PUT'), 200, 'application/json', '{}')).toBe('the operation is not in the description');
    expect(checker.check({ method: 'GET', routeUrl: undefined }, 200, 'application/json', '{}')).toBe(
      'status 200 without a route',
    );
  });
});
