import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorBody, expectFieldError, expectPublicReadHeaders } from '../helpers/assertions.js';
import { addProcess, processForm } from '../helpers/catalogue.js';

/** What every operation shares, driven through the catalogue operations. */

const PROCESSES = '/rest/api/processes';
const VERSIONED_GET = 'application/vnd.registry.processes.get.v1+json';
const JSON_UTF8 = 'application/json;charset=UTF-8';

let t: TestApp;
let admin: { authorization: string };

beforeAll(async () => {
  t = await startTestApp();
  admin = t.users.admin;
});
afterAll(async () => t.close());

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });
/** As the ADMIN unless `headers` names another `authorization`; `null` sends none. */
const post = (url: string, payload: string, headers: Record<string, string | null> = {}) => {
  const all = { authorization: admin.authorization, 'content-type': 'application/json', ...headers };
  return t.app.inject({
    method: 'POST',
    url,
    payload,
    headers: Object.fromEntries(Object.entries(all).filter(([, value]) => value !== null)),
  });
};

const SORT_UNSORTED = { sorted: false, unsorted: true, empty: true };

describe('the page envelope', () => {
  it('of an anonymous GET /rest/api/processes is exactly the specified one, in its field order', async () => {
    const empty = await get(PROCESSES);
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({
      content: [],
      totalPages: 0,
      totalElements: 0,
      first: true,
      last: true,
      numberOfElements: 0,
      size: 30,
      number: 0,
      empty: true,
      sort: SORT_UNSORTED,
      pageable: { pageNumber: 0, pageSize: 30, offset: 0, paged: true, unpaged: false, sort: SORT_UNSORTED },
    });

    const created = [await addProcess(t.app, t.users.admin), await addProcess(t.app, t.users.admin)].sort((a, b) =>
      a.identifier < b.identifier ? -1 : 1,
    );
    const response = await get(PROCESSES);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/vnd.registry.processes.find.v1+json;charset=UTF-8');
    expectPublicReadHeaders(response, 'Accept, Authorization');
    const page = response.json();
    expect(Object.keys(page)).toEqual([
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
    expect(Object.keys(page.pageable)).toEqual(['pageNumber', 'pageSize', 'offset', 'paged', 'unpaged', 'sort']);
    expect(page).toEqual({
      content: created,
      totalPages: 1,
      totalElements: 2,
      first: true,
      last: true,
      numberOfElements: 2,
      size: 30,
      number: 0,
      empty: false,
      sort: SORT_UNSORTED,
      pageable: { pageNumber: 0, pageSize: 30, offset: 0, paged: true, unpaged: false, sort: SORT_UNSORTED },
    });
  });
});

describe('paging and sorting', () => {
  const titles = ['Delta', 'alpha', 'Charlie', 'bravo', 'Echo'];
  const domain = 'paging';
  let processes: Array<{ identifier: string; title: string; qualifiedIdentifier: string }>;

  beforeAll(async () => {
    processes = [];
    for (const [index, title] of titles.entries()) {
      // Two restricted, three not: ties that the identifier must break.
      processes.push(
        (await addProcess(t.app, t.users.admin, {
          title,
          domain,
          restricted: index % 2 === 1,
          qualifiedIdentifier: `paging-scheme-${index % 2}::value-${String.fromCharCode(101 - index)}`,
        })) as never,
      );
    }
  });

  const pageOf = async (query: string) => {
    const response = await get(`${PROCESSES}?domain=${domain}&${query}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };

  it.each([
    ['page=-1', 'page', 'Min'],
    ['size=0', 'size', 'Min'],
    ['page=first', 'page', 'typeMismatch'],
    ['size=ten', 'size', 'typeMismatch'],
    ['size=1.5', 'size', 'typeMismatch'],
    ['page=2147483648', 'page', 'Max'],
  ])('answers 400 for %s', async (query, field, code) => {
    const body = expectErrorBody(
      await get(`${PROCESSES}?${query}`),
      400,
      "Validation failed for object='queryParameters'. Error count: 1",
    );
    expectFieldError(body, 'queryParameters', field, code);
  });

  it('serves a size above 2000 as 2000', async () => {
    const page = await pageOf('size=5000');
    expect(page).toMatchObject({ size: 2000, pageable: { pageSize: 2000 }, totalElements: 5, numberOfElements: 5 });
  });

  it('sorts by a dotted property, with several sort parameters in different directions', async () => {
    const byValue = await pageOf('sort=qualifiedIdentifier.value');
    expect(byValue.content.map((p: { qualifiedIdentifier: string }) => p.qualifiedIdentifier.split('::')[1])).toEqual([
      'value-a',
      'value-b',
      'value-c',
      'value-d',
      'value-e',
    ]);
    expect(byValue.sort).toEqual({ sorted: true, unsorted: false, empty: false });
    expect(byValue.pageable.sort).toEqual({ sorted: true, unsorted: false, empty: false });

    const mixed = await pageOf('sort=restricted,desc&sort=qualifiedIdentifier.value,asc');
    expect(mixed.content.map((p: { title: string }) => p.title)).toEqual([
      'bravo',
      'alpha',
      'Echo',
      'Charlie',
      'Delta',
    ]);

    const twoPropertiesOneDirection = await pageOf('sort=restricted,qualifiedIdentifier.value,desc');
    expect(twoPropertiesOneDirection.content.map((p: { title: string }) => p.title)).toEqual([
      'alpha',
      'bravo',
      'Delta',
      'Charlie',
      'Echo',
    ]);
  });

  it('breaks ties by identifier, so pages of a tied sort neither repeat nor skip', async () => {
    const sortedIds = processes.map((p) => p.identifier).sort();
    const seen: string[] = [];
    for (let page = 0; page < 5; page += 1) {
      const response = await pageOf(`sort=domain&size=1&page=${page}`);
      seen.push(...response.content.map((p: { identifier: string }) => p.identifier));
    }
    expect(seen).toEqual(sortedIds);
    const unsorted = await pageOf('');
    expect(unsorted.content.map((p: { identifier: string }) => p.identifier)).toEqual(sortedIds);
    expect(unsorted.sort).toEqual(SORT_UNSORTED);
  });

  it('answers 400 naming each unknown sort property, even beside known ones', async () => {
    const body = expectErrorBody(
      await get(`${PROCESSES}?sort=title&sort=owner,desc&sort=qualifiedIdentifier.nope`),
      400,
      "Validation failed for object='queryParameters'. Error count: 2",
    );
    expect(body.errors.map((error: { rejectedValue: string }) => error.rejectedValue)).toEqual([
      'owner',
      'qualifiedIdentifier.nope',
    ]);
    expectFieldError(body, 'queryParameters', 'sort', 'InvalidSortProperty');
  });

  it('keeps totalElements on a page past the end', async () => {
    const page = await pageOf('page=7&size=2');
    expect(page).toMatchObject({
      content: [],
      totalElements: 5,
      totalPages: 3,
      number: 7,
      numberOfElements: 0,
      empty: true,
      first: false,
      last: true,
      pageable: { offset: 14, pageNumber: 7, pageSize: 2 },
    });
  });

  it('marks the first and last pages', async () => {
    expect(await pageOf('page=0&size=2')).toMatchObject({
      first: true,
      last: false,
      numberOfElements: 2,
      totalPages: 3,
    });
    expect(await pageOf('page=1&size=2')).toMatchObject({ first: false, last: false });
    expect(await pageOf('page=2&size=2')).toMatchObject({ first: false, last: true, numberOfElements: 1 });
  });
});

describe('content negotiation', () => {
  let url: string;
  beforeAll(async () => {
    url = `${PROCESSES}/${(await addProcess(t.app, t.users.admin)).identifier}`;
  });

  it.each([
    ['no Accept', undefined, VERSIONED_GET],
    ['an empty Accept', '', VERSIONED_GET],
    ['the versioned type', VERSIONED_GET, VERSIONED_GET],
    ['the versioned type with charset', `${VERSIONED_GET};charset=UTF-8`, VERSIONED_GET],
    ['application/json', 'application/json', 'application/json'],
    ['application/json with charset', JSON_UTF8, 'application/json'],
    ['*/*', '*/*', VERSIONED_GET],
    ['application/*', 'application/*', VERSIONED_GET],
    ['a list preferring JSON', 'text/html, application/json;q=0.9, */*;q=0.1', 'application/json'],
  ])('answers %s', async (_case, accept, type) => {
    const response = await get(url, accept === undefined ? {} : { accept });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe(`${type};charset=UTF-8`);
    expect(response.json().identifier).toBe(url.split('/').at(-1));
  });

  it.each(['text/html', 'application/xml', 'application/vnd.registry.processes.add.v1+json'])(
    'answers 406 for %s',
    async (accept) => {
      const response = await get(url, { accept });
      const body = expectErrorBody(response, 406);
      expect(body).toMatchObject({ error: 'Not Acceptable', exception: 'NotAcceptableError', path: url });
      expect(body.message).toContain(VERSIONED_GET);
    },
  );

  it('gives the array variant only for the stream type', async () => {
    expect(Array.isArray((await get(PROCESSES, { accept: 'application/json' })).json())).toBe(false);
    expect(
      Array.isArray((await get(PROCESSES, { accept: 'application/vnd.registry.processes.find.v1+json' })).json()),
    ).toBe(false);
    const stream = await get(PROCESSES, { accept: 'application/vnd.registry.processes.stream.v1+json;charset=UTF-8' });
    expect(stream.headers['content-type']).toBe('application/vnd.registry.processes.stream.v1+json;charset=UTF-8');
    expect(Array.isArray(stream.json())).toBe(true);
  });

  it.each([
    ['the versioned type', 'application/vnd.registry.processes.add.v1+json', 201],
    ['the versioned type with charset', 'application/vnd.registry.processes.add.v1+json;charset=UTF-8', 201],
    ['application/json', JSON_UTF8, 201],
    ["another operation's type", 'application/vnd.registry.document-types.add.v1+json', 415],
    ['text/plain', 'text/plain', 415],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded', 415],
  ])('takes a body in %s', async (_case, contentType, status) => {
    const response = await post(PROCESSES, JSON.stringify(processForm()), { 'content-type': contentType });
    if (status === 201) expect(response.statusCode, response.body).toBe(201);
    else {
      const body = expectErrorBody(response, 415);
      expect(body).toMatchObject({ error: 'Unsupported Media Type', exception: 'UnsupportedMediaTypeError' });
    }
  });
});

describe('authentication', () => {
  it('answers 401 with the challenge for wrong credentials even on an operation open to anonymous callers', async () => {
    for (const authorization of [
      `Basic ${Buffer.from('admin:wrong').toString('base64')}`,
      `Basic ${Buffer.from('nobody:whatever-password').toString('base64')}`,
      'Basic !!!not-base64',
      'Bearer some-token',
    ]) {
      const response = await get(PROCESSES, { authorization });
      expectErrorBody(response, 401);
      expect(response.headers['www-authenticate'], authorization).toBe('Basic realm="registry"');
    }
  });

  it('answers 401 without credentials and 403 for a role not allowed, both in the common body', async () => {
    const anonymous = await post(PROCESSES, JSON.stringify(processForm()), { authorization: null });
    expect(expectErrorBody(anonymous, 401)).toMatchObject({
      error: 'Unauthorized',
      exception: 'UnauthorizedError',
      path: PROCESSES,
    });
    expect(anonymous.headers['www-authenticate']).toBe('Basic realm="registry"');

    const forbidden = await post(PROCESSES, JSON.stringify(processForm()), {
      authorization: t.users.serviceProvider.authorization,
    });
    expect(expectErrorBody(forbidden, 403)).toMatchObject({ error: 'Forbidden', exception: 'ForbiddenError' });
    expect(forbidden.headers['www-authenticate']).toBeUndefined();
  });

  it('checks the role before the body: a forbidden caller learns nothing about validation', async () => {
    const response = await post(PROCESSES, '{not json', { authorization: t.users.accessPointProvider.authorization });
    expectErrorBody(response, 403);
  });
});

describe('request bodies', () => {
  it('answers 400 with a binding failure for a body that is not JSON, or empty', async () => {
    for (const payload of ['{"domain": ', '']) {
      const body = expectErrorBody(
        await post(PROCESSES, payload),
        400,
        "Validation failed for object='processFormDTO'. Error count: 1",
      );
      expect(body.errors[0]).toMatchObject({
        objectName: 'processFormDTO',
        field: '',
        code: 'typeMismatch',
        bindingFailure: true,
      });
    }
  });

  it('answers 400 for a JSON body that is not an object', async () => {
    const body = expectErrorBody(await post(PROCESSES, '[1, 2]'), 400);
    expect(body.errors[0]).toMatchObject({ code: 'typeMismatch', bindingFailure: true });
  });

  it('answers 413 for a body over 1 MiB, in the common body', async () => {
    const payload = JSON.stringify(processForm({ alias: 'x'.repeat(1024 * 1024) }));
    const body = expectErrorBody(await post(PROCESSES, payload), 413);
    expect(body).toMatchObject({ error: 'Payload Too Large', path: PROCESSES });
  });

  it('treats a JSON null as an absent property', async () => {
    const created = await post(PROCESSES, JSON.stringify(processForm({ alias: null })));
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().alias).toBeNull();
    const missing = await post(PROCESSES, JSON.stringify(processForm({ domain: null, visible: null })));
    const body = expectErrorBody(missing, 400, "Validation failed for object='processFormDTO'. Error count: 2");
    expectFieldError(body, 'processFormDTO', 'domain', 'NotNull', 'must not be null');
    expectFieldError(body, 'processFormDTO', 'visible', 'NotNull', 'must not be null');
  });

  it('refuses NUL characters in body strings and in query parameters', async () => {
    const body = expectErrorBody(
      await post(PROCESSES, JSON.stringify(processForm({ title: 'In\u0000voice', alias: 'ok\u0000' }))),
      400,
      "Validation failed for object='processFormDTO'. Error count: 2",
    );
    expectFieldError(body, 'processFormDTO', 'title', 'NoNulCharacter');
    expectFieldError(body, 'processFormDTO', 'alias', 'NoNulCharacter');
    // A refused string may be a password: it is not echoed back.
    expect(JSON.stringify(body)).not.toContain('voice');
    const query = expectErrorBody(
      await get(`${PROCESSES}?query=a%00b`),
      400,
      "Validation failed for object='queryParameters'. Error count: 1",
    );
    expectFieldError(query, 'queryParameters', 'query', 'NoNulCharacter', 'must not contain NUL characters');
  });
});

describe('error bodies', () => {
  it('carry the header constants on every status, with a UTC timestamp and the path without its query', async () => {
    const responses = [
      await get(`${PROCESSES}/00000000-0000-4000-8000-000000000000?x=1`),
      await get(`${PROCESSES}?page=-1`),
      await get('/rest/api/no-such-resource'),
      await post(PROCESSES, '{}', { authorization: null }),
    ];
    for (const response of responses) {
      const body = expectErrorBody(response, response.statusCode);
      expect(body.path).not.toContain('?');
      const age = Date.now() - Date.parse(`${body.timestamp}Z`);
      expect(age).toBeGreaterThanOrEqual(0);
      expect(age).toBeLessThan(60_000);
    }
    expect(responses.map((response) => response.statusCode)).toEqual([404, 400, 404, 401]);
  });

  it('answers 405 with Allow for a method a known path does not take', async () => {
    const response = await t.app.inject({ method: 'PATCH', url: `${PROCESSES}?page=1` });
    const body = expectErrorBody(response, 405);
    expect(body).toMatchObject({ error: 'Method Not Allowed', exception: 'MethodNotAllowedError', path: PROCESSES });
    expect(response.headers.allow).toMatch(/GET/);
    expect(response.headers.allow).toMatch(/POST/);
    const item = await t.app.inject({ method: 'POST', url: `${PROCESSES}/00000000-0000-4000-8000-000000000000` });
    expectErrorBody(item, 405);
    expect(String(item.headers.allow).split(', ').sort()).toEqual(expect.arrayContaining(['DELETE', 'GET', 'PUT']));
    expect(item.headers.allow).not.toMatch(/POST/);
  });

  it('answers an unknown path with the common 404 body', async () => {
    const body = expectErrorBody(await get('/rest/api/no-such-resource'), 404);
    expect(body).toMatchObject({ error: 'Not Found', path: '/rest/api/no-such-resource' });
  });
});
