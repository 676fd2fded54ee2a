import { writeFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECURITY_HEADERS } from '../../src/http/security-headers.js';
import { basic, startTestApp, type TestApp } from '../helpers/app.js';
import { addProcess, documentTypeForm, processForm } from '../helpers/catalogue.js';
import { addParticipant, participantForm } from '../helpers/participants.js';
import { fingerprintOf } from './harness/fingerprint.js';

/**
 * Property-based fuzzing of every operation the application registers (taken from its OpenAPI description):
 * random and adversarial paths, query strings, headers and bodies. Whatever comes in, the answer is never a
 * 5xx, every error uses the common error body with the status it names, and a refused write leaves the
 * database exactly as it was.
 */
/** Per database project: the suite runs on PostgreSQL and on PGlite, so a CI run makes twice as many. */
const CASES = Number(process.env.RELIABILITY_FUZZ_CASES ?? 5_000);
const ALLOWED_STATUSES = new Set([200, 201, 204, 400, 401, 403, 404, 405, 406, 409, 413, 415, 429]);

interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** `/rest/api/processes/{identifier}` */
  path: string;
  writes: boolean;
}

let t: TestApp;
let operations: Operation[];
const known: { uuids: string[]; qualified: string[] } = { uuids: [], qualified: [] };

beforeAll(async () => {
  t = await startTestApp();
  const description = (await t.app.inject({ url: '/v3/api-docs' })).json<{
    paths: Record<string, Record<string, unknown>>;
  }>();
  operations = Object.entries(description.paths)
    .filter(([path]) => path.startsWith('/rest/api/'))
    .flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((method) => ['get', 'post', 'put', 'delete'].includes(method))
        .map((method) => ({ method: method.toUpperCase() as Operation['method'], path, writes: method !== 'get' })),
    );
  const process = await addProcess(t.app, t.users.admin);
  const participant = await addParticipant(t.app, t.users.serviceProvider, {
    processes: [{ identifier: process.identifier }],
  });
  known.uuids.push(
    process.identifier,
    participant.identifier,
    t.fixture.serviceProviderId,
    t.fixture.accessPointId,
    t.fixture.accessPointProviderId,
  );
  known.qualified.push(participant.qualifiedIdentifier, process.qualifiedIdentifier);
});
afterAll(() => t.close());

// ---- adversarial values ----------------------------------------------------------------------------------

const NASTY_STRINGS = [
  "' OR '1'='1",
  "'; DROP TABLE participants; --",
  '" OR 1=1 --',
  '1); DELETE FROM processes; --',
  '$1',
  '%',
  '_',
  '\\',
  '../../../../etc/passwd',
  '..%2f..%2f..%2fetc%2fpasswd',
  '/etc/passwd\u0000',
  'a\u0000b',
  '\u0000',
  '\uD800',
  '\uDFFF',
  '\uFFFE',
  '😀'.repeat(50),
  'ǅ\u0301\u200B\u202E',
  '<script>alert(1)</script>',
  '${7*7}',
  '{{7*7}}',
  'NaN',
  'Infinity',
  '-0',
  '1e400',
  '9'.repeat(400),
  '0x10',
  'true',
  'null',
  '[]',
  '{}',
  '',
  ' ',
  '\t\r\n',
  'iso6523-actorid-upis::',
  '::',
  'iso6523-actorid-upis::0192:',
  'iso6523-actorid-upis::9999:123',
  'scheme::value::extra',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '123e4567-e89b-12d3-a456-42661417400',
  '123e4567-e89b-12d3-a456-4266141740000',
  'g23e4567-e89b-12d3-a456-426614174000',
  'x'.repeat(5000),
];
const nastyString = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.uuid(),
  fc.integer({ min: 1, max: 200_000 }).map((length) => 'é'.repeat(length)),
);
const nastyNumber = fc.oneof(
  fc.constantFrom(-1, 0, 1, -2147483649, 2147483648, Number.MAX_SAFE_INTEGER, 1e308, -1e308, 0.5, -0),
  fc.integer(),
  fc.double({ noNaN: true }),
);
/** Stands for a JSON value nested `depth` levels deep, written out only in the request's text (see `toJson`). */
const nested = (depth: number, asArray: boolean) => ({ $nested: depth, asArray });
const NESTED_TOKEN = /"\$nested:(\d+):(array|object)"/g;

/** JSON text of a value whose nested markers become deep arrays or objects, without recursion anywhere. */
function toJson(value: unknown): string {
  const isMarker = (item: unknown): item is ReturnType<typeof nested> =>
    typeof item === 'object' && item !== null && '$nested' in item;
  const text =
    JSON.stringify(value, (_key, item: unknown) =>
      isMarker(item) ? `$nested:${item.$nested}:${item.asArray ? 'array' : 'object'}` : item,
    ) ?? 'null';
  return text.replace(NESTED_TOKEN, (_match, depth: string, kind: string) =>
    kind === 'array'
      ? `${'['.repeat(Number(depth))}1${']'.repeat(Number(depth))}`
      : `${'{"a":'.repeat(Number(depth))}1${'}'.repeat(Number(depth))}`,
  );
}
const nastyJson: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  nastyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(nastyString, { maxLength: 5 }),
  fc.record({
    identifier: nastyString,
    qualifiedIdentifier: fc.oneof(nastyString, fc.record({ scheme: nastyString, value: nastyString })),
  }),
  fc.integer({ min: 50, max: 20_000 }).chain((depth) => fc.boolean().map((asArray) => nested(depth, asArray))),
);

// ---- request parts ---------------------------------------------------------------------------------------

/** Percent-encoding that also takes lone surrogates (as their UTF-8 replacement), where encodeURIComponent throws. */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...Buffer.from(value, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
  }
}

/** A path parameter: a known or unknown identifier, or something hostile, percent-encoded or raw. */
const pathValue = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...['k0', 'k1', 'k2', 'k3', 'k4', 'q0', 'q1']).map((slot) => ({ slot })) },
  { weight: 2, arbitrary: fc.uuid().map((uuid) => ({ raw: uuid })) },
  { weight: 4, arbitrary: nastyString.map((value) => ({ raw: encode(value) })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('%FF', '%C3%28', '%E2%82', '%ED%A0%80', '%00', '..', '%2e%2e', '%', '%zz', 'a%2Fb', '%252F')
      .map((raw) => ({ raw })),
  },
);
type PathValue = { slot: string } | { raw: string };

function resolvePathValue(value: PathValue): string {
  if ('raw' in value) return value.raw || 'x';
  const list = value.slot.startsWith('k') ? known.uuids : known.qualified;
  return encodeURIComponent(list[Number(value.slot.slice(1)) % list.length] as string);
}

const QUERY_KEYS = [
  'page',
  'size',
  'sort',
  'query',
  'search',
  'icd',
  'domain',
  'documentType',
  'dependency',
  'requiredIcd',
  'restricted',
  'visible',
  'processes',
  'lastModificationDate',
  'lastModificationDateFrom',
  'lastModificationDateTo',
  'unknown',
  '__proto__',
  'constructor',
];
const SORTS = [
  'title',
  'title,DESC',
  'qualifiedIdentifier.value,ASC',
  'unknown',
  'title,sideways',
  ',,,',
  'title;DROP TABLE x',
  'a.b.c.d.e',
  'name,organizationIdentifier,DESC',
  'constructor',
  '__proto__.x',
  'identifier,asc',
];
const queryValue = fc.oneof(
  nastyString,
  nastyNumber.map(String),
  fc.constantFrom(...SORTS),
  fc.constantFrom('0192', '9999', 'true', 'false', '2024-02-30', '2024-01-01', '-1', '99999999999999999999'),
);
const queryString = fc
  .array(fc.tuple(fc.constantFrom(...QUERY_KEYS), queryValue), { maxLength: 5 })
  .map((pairs) => pairs.map(([key, value]) => `${key}=${encode(value)}`).join('&'));

const MEDIA_TYPES = [
  'application/json',
  'application/json;charset=UTF-8',
  'application/json; charset=latin1',
  'text/plain',
  'text/html',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  '*/*',
  'application/*',
  'text/*',
  'application/vnd.registry.processes.add.v1+json',
  'application/vnd.registry.participants.add.v1+json',
  'application/vnd.registry.participants.stream.v1+json',
  'application/vnd.registry.processes.find.v2+json',
  'application/vnd.registry.nothing.v1+json',
  'garbage',
  ';;;',
  'application/json;q=0',
  'application/json, text/html;q=0.1',
];
const mediaType = fc.option(
  fc.oneof(
    fc.constantFrom(...MEDIA_TYPES),
    fc.string({ maxLength: 30 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  ),
  { nil: undefined },
);

type Who = 'admin' | 'authority' | 'serviceProvider' | 'otherServiceProvider' | 'accessPointProvider';
const authorization = fc.oneof(
  { weight: 50, arbitrary: fc.constant({ fitting: true }) },
  {
    weight: 25,
    arbitrary: fc
      .constantFrom<Who>('admin', 'authority', 'serviceProvider', 'otherServiceProvider', 'accessPointProvider')
      .map((who) => ({ who })),
  },
  { weight: 8, arbitrary: fc.constant({ none: true }) },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        'Basic',
        'Basic ',
        'Basic !!!',
        'Bearer token',
        `Basic ${Buffer.from('nocolon').toString('base64')}`,
        `Basic ${'A'.repeat(10_000)}`,
        'basic',
        `Basic ${Buffer.from('admin:\u0000').toString('base64')}`,
      )
      .map((header) => ({ header })),
  },
  { weight: 1, arbitrary: fc.uuid().map((name) => ({ header: basic(`nobody-${name}`, 'wrong-password') })) },
);
type Auth = { who: Who } | { fitting: true } | { none: true } | { header: string };

/** A caller the operation most likely lets in, so that most cases get past authentication. */
function fittingCaller(operation: Operation): Who {
  if (operation.path.startsWith('/rest/api/participants')) return 'serviceProvider';
  return operation.method === 'GET' ? 'authority' : 'admin';
}

/** A valid form of the operation with one property replaced, or a body of any shape and encoding. */
function validBody(operation: Operation): Record<string, unknown> {
  const [, , , resource, , sub] = operation.path.split('/');
  if (resource === 'processes') return processForm();
  if (resource === 'document-types') return documentTypeForm();
  if (resource === 'participants' && sub === undefined && operation.method === 'PUT')
    return { processes: [], contact: { name: 'Kari' } };
  if (resource === 'participants') return participantForm();
  if (resource === 'users')
    return {
      username: `fuzz-${Math.random().toString(36).slice(2)}`,
      password: 'a-long-enough-password',
      role: 'ADMIN',
    };
  if (resource === 'service-providers') return { title: 'Fuzz SP', accessPoint: { identifier: known.uuids[3] } };
  if (resource === 'access-point-providers') return { title: 'Fuzz APP', contact: { name: 'Fuzz' } };
  if (resource === 'accessPoints') return { title: 'Fuzz AP', provider: { identifier: known.uuids[4] }, endpoints: [] };
  return { title: 'Fuzz' };
}
const body = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.tuple(fc.string({ maxLength: 3 }), nastyJson).map(([key, value]) => ({ mutate: { key, value } })),
  },
  { weight: 3, arbitrary: nastyJson.map((json) => ({ json })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        '',
        '{',
        '{"a":',
        'null',
        '[]',
        'not json',
        '{"a":1}{"b":2}',
        '\u0000',
        '{"__proto__":{"x":1}}',
        '{"constructor":{"prototype":{"x":1}}}',
      )
      .map((text) => ({ text })),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({
      bytes: Buffer.concat([
        Buffer.from('{"title":"'),
        Buffer.from(bytes),
        Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
        Buffer.from('"}'),
      ]),
    })),
  },
  { weight: 1, arbitrary: fc.constant({ huge: true }) },
);
type Body =
  | { mutate: { key: string; value: unknown } }
  | { json: unknown }
  | { text: string }
  | { bytes: Buffer }
  | { huge: true };

function payloadOf(operation: Operation, spec: Body): string | Buffer {
  if ('text' in spec) return spec.text;
  if ('bytes' in spec) return spec.bytes;
  if ('huge' in spec) return JSON.stringify({ ...validBody(operation), title: 'x'.repeat(2 * 1024 * 1024) });
  if ('json' in spec) return toJson(spec.json);
  const form = validBody(operation);
  const keys = Object.keys(form);
  // One of the form's own properties most of the time, so that validation gets past the first field.
  const key = keys[spec.mutate.key.length % (keys.length + 1)] ?? spec.mutate.key;
  return toJson({ ...form, [key]: spec.mutate.value });
}

const fuzzCase = fc.record({
  operation: fc.nat(),
  pathValues: fc.array(pathValue, { minLength: 3, maxLength: 3 }),
  query: fc.option(queryString, { nil: undefined }),
  accept: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: mediaType }),
  contentType: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: mediaType }),
  auth: authorization,
  body,
  requestId: fc.option(
    fc.string({ maxLength: 200 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
    { nil: undefined },
  ),
});

// ---- checks ----------------------------------------------------------------------------------------------

function expectCommonErrorBody(response: LightMyRequestResponse, url: string, context: string) {
  expect(response.headers['content-type'], context).toMatch(/^application\/json/);
  const body = response.json<Record<string, unknown>>();
  expect(body, context).toMatchObject({
    status: response.statusCode,
    error: STATUS_CODES[response.statusCode],
    exception: expect.any(String),
    message: expect.any(String),
  });
  expect(body.timestamp, context).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);
  // The path as the service saw it: the client already resolved dot segments such as `%2e%2e`.
  expect(body.path, context).toMatch(/^\/[^?]*$/);
  expect(response.body, context).not.toMatch(
    /\bat .+:\d+:\d+|node_modules|SELECT |INSERT |UPDATE .* SET|syntax error|relation "/,
  );
  if (response.statusCode === 401) expect(response.headers['www-authenticate'], context).toBe('Basic realm="registry"');
}

/** fast-check's report without the counterexample, which can be megabytes long; the seed and path replay it. */
function reportBriefly<T>(details: fc.RunDetails<T>) {
  if (!details.failed) return;
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(
    `fuzz case ${details.numRuns} failed (seed ${details.seed}, path "${details.counterexamplePath}"): ${cause.slice(0, 4000)}`,
  );
}

describe('fuzzing every operation', () => {
  it(`never answers 5xx, always the common error body, and refused writes change nothing (${CASES} cases)`, async () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
    const statuses = new Map<number, number>();
    // Nothing else writes to this database: the fingerprint changes only with a write the service accepted.
    let fingerprint = await fingerprintOf(t.db);
    await fc.assert(
      fc.asyncProperty(fuzzCase, async (c) => {
        const operation = operations[c.operation % operations.length] as Operation;
        let n = 0;
        const url =
          operation.path.replace(/\{[^}]+\}/g, () => resolvePathValue(c.pathValues[n++ % 3] as PathValue)) +
          (c.query ? `?${c.query}` : '');
        const auth = c.auth as Auth;
        const headers: Record<string, string> = {};
        if ('who' in auth || 'fitting' in auth)
          headers.authorization = t.users['who' in auth ? auth.who : fittingCaller(operation)].authorization;
        if ('header' in auth) headers.authorization = auth.header;
        if (c.accept !== undefined) headers.accept = c.accept;
        if (c.requestId !== undefined) headers['x-request-id'] = c.requestId;
        const payload =
          operation.method === 'POST' || operation.method === 'PUT' ? payloadOf(operation, c.body as Body) : undefined;
        if (payload !== undefined) headers['content-type'] = c.contentType ?? 'application/json';

        const response = await t.app.inject({
          method: operation.method,
          url,
          headers,
          ...(payload === undefined ? {} : { payload }),
        });
        if (process.env.RELIABILITY_FUZZ_DUMP && response.statusCode >= 500) {
          writeFileSync(
            process.env.RELIABILITY_FUZZ_DUMP,
            JSON.stringify({ method: operation.method, url, headers, payload: payload?.toString() }),
          );
        }
        const context = `${operation.method} ${url.slice(0, 300)} -> ${response.statusCode} ${response.body.slice(0, 500)}`;
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);

        expect(response.statusCode, context).toBeLessThan(500);
        expect(ALLOWED_STATUSES.has(response.statusCode), context).toBe(true);
        for (const [name, value] of Object.entries(SECURITY_HEADERS))
          expect(response.headers[name], context).toBe(value);
        if (response.statusCode >= 400) {
          expectCommonErrorBody(response, url, context);
          if (operation.writes)
            expect(await fingerprintOf(t.db), `database changed by a refused ${context}`).toBe(fingerprint);
        } else if (operation.writes) {
          fingerprint = await fingerprintOf(t.db);
        }
      }),
      {
        numRuns: CASES,
        endOnFailure: true,
        reporter: reportBriefly,
        // RELIABILITY_FUZZ_SEED and _PATH replay a reported failure.
        ...(process.env.RELIABILITY_FUZZ_SEED
          ? { seed: Number(process.env.RELIABILITY_FUZZ_SEED), path: process.env.RELIABILITY_FUZZ_PATH }
          : {}),
      },
    );
    console.log(
      `fuzz (${process.env.TEST_DATABASE}): ${CASES} cases over ${operations.length} operations; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
  }, 600_000);
});
