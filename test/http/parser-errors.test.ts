import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { sendRaw } from '../helpers/raw-http.js';

/**
 * What Node's HTTP parser refuses before any route is chosen, sent over a raw socket to a listening
 * application: the answer still carries the common error body and the header constants.
 */
const t = useTestApp({ listen: true });
let address: { host: string; port: number };

beforeAll(() => {
  const { hostname, port } = new URL(t.base);
  address = { host: hostname, port: Number(port) };
});

/** Over Node's default `maxHeaderSize` (16 KiB). */
const OVER_HEADER_LIMIT = 20_000;
const PROCESSES = '/rest/api/processes';

describe('requests the HTTP parser refuses', () => {
  it('431 for headers over the limit', async () => {
    const response = await sendRaw(
      address,
      `GET ${PROCESSES} HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(OVER_HEADER_LIMIT)}\r\n\r\n`,
    );
    const body = expectErrorBody(response, 431, 'The request headers are larger than the service accepts');
    expect(body).toMatchObject({
      error: 'Request Header Fields Too Large',
      exception: 'RequestHeaderFieldsTooLargeError',
      path: PROCESSES,
    });
    expect(response.headers.connection).toBe('close');
  });

  it('414 for a request line over the limit', async () => {
    const response = await sendRaw(
      address,
      `GET ${PROCESSES}?query=${'a'.repeat(OVER_HEADER_LIMIT)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    const body = expectErrorBody(response, 414, 'The request line is longer than the service accepts');
    expect(body).toMatchObject({ error: 'URI Too Long', exception: 'UriTooLongError' });
  });

  it('400 for a malformed request line', async () => {
    const response = await sendRaw(address, `GET /rest/api/pro\u0001cesses HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(expectErrorBody(response, 400, 'The request is not valid HTTP').exception).toBe('BadRequestError');
    expectErrorBody(await sendRaw(address, 'HELLO WORLD\r\n\r\n'), 400);
  });

  it('413 at once for a declared Content-Length over the body limit, before any of the body is read', async () => {
    const response = await sendRaw(
      address,
      [
        `POST ${PROCESSES} HTTP/1.1`,
        'Host: x',
        `Authorization: ${t.users.admin.authorization}`,
        'Content-Type: application/json',
        `Content-Length: ${2 * 1024 * 1024}`,
        '',
        '{',
      ].join('\r\n'),
      { keepWriting: true },
    );
    expect(expectErrorBody(response, 413).path).toBe(PROCESSES);
  });

  it('a fuzzer sending over-long headers and request lines always gets the common error body and the header constants', async () => {
    const token = fc.string({
      unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-'),
      minLength: 1,
      maxLength: 30,
    });
    const text = (min: number, max: number) =>
      fc
        .integer({ min, max })
        .chain((length) => fc.constantFrom(...'aZ09-._~%/?=&+').map((unit) => unit.repeat(length)));
    const overLongHeaders = fc
      .record({
        method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
        path: fc.constantFrom(PROCESSES, '/rest/api/participants', '/v3/api-docs', '/nowhere'),
        headers: fc.array(fc.tuple(token, text(1, 40_000)), { minLength: 1, maxLength: 20 }),
      })
      .filter(({ headers }) => headers.reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0) > 17_000)
      .map(
        ({ method, path, headers }) =>
          `${method} ${path} HTTP/1.1\r\nHost: x\r\n${headers.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n`,
      );
    const overLongRequestLine = fc
      .record({
        method: fc.constantFrom('GET', 'POST', 'DELETE', 'BREW'),
        target: text(17_000, 120_000),
        version: fc.constantFrom(' HTTP/1.1', ' HTTP/1.0', ''),
      })
      .map(({ method, target, version }) => `${method} /${target}${version}\r\nHost: x\r\n\r\n`);
    const malformedRequestLine = fc
      .tuple(fc.string({ unit: 'binary-ascii', maxLength: 200 }), fc.constantFrom('\u0000', '\u0001', ' \t ', '\u007f'))
      .map(([junk, control]) => `${junk}${control}${junk} HTTP/1.1\r\nHost: x\r\n\r\n`);

    await fc.assert(
      fc.asyncProperty(fc.oneof(overLongHeaders, overLongRequestLine, malformedRequestLine), async (request) => {
        const response = await sendRaw(address, request);
        expect([400, 414, 431]).toContain(response.statusCode);
        expectErrorBody(response, response.statusCode);
      }),
      { numRuns: 150 },
    );
  });
});
