import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { sendRaw, type RawResponse } from '../helpers/raw-http.js';

/**
 * Requests whose body trickles in, over real sockets from distinct loopback addresses: each must arrive whole within
 * the request time limit, and one address holds at most so many requests at once. Test-sized settings.
 */
const REQUEST_TIMEOUT_MS = 1500;
const MAX_REQUESTS_PER_ADDRESS = 6;
const t = useTestApp({
  listen: true,
  app: { requestTimeoutMs: REQUEST_TIMEOUT_MS, maxRequestsPerAddress: MAX_REQUESTS_PER_ADDRESS },
});
let address: { host: string; port: number };

beforeAll(() => {
  const { hostname, port } = new URL(t.base);
  address = { host: hostname, port: Number(port) };
});

const PROCESSES = '/rest/api/processes';

/** A POST that declares a large body and sends it a byte every 200 ms from `localAddress`. */
function slowBody(localAddress: string): Promise<RawResponse & { ms: number }> {
  const started = Date.now();
  const head = [
    `POST ${PROCESSES} HTTP/1.1`,
    'Host: x',
    `Authorization: ${t.users.admin.authorization}`,
    'Content-Type: application/json',
    `Content-Length: ${100 * 1024}`,
    '',
    '{',
  ].join('\r\n');
  return sendRaw(address, head, { localAddress, trickleMs: 200 }).then((response) => ({
    ...response,
    ms: Date.now() - started,
  }));
}

function get(localAddress: string, path = PROCESSES): Promise<RawResponse> {
  const request = [
    `GET ${path} HTTP/1.1`,
    'Host: x',
    `Authorization: ${t.users.admin.authorization}`,
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  return sendRaw(address, request, { localAddress, keepWriting: true });
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('requests that do not arrive in time', () => {
  it('a body sent a byte at a time is answered 408 once the time limit passes, and the connection closes', async () => {
    const processes = (await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM processes'))[0]?.count;
    const response = await slowBody('127.0.0.4');
    const body = expectErrorBody(response, 408, 'The request was not received in time');
    expect(body).toMatchObject({ exception: 'RequestTimeoutError', path: PROCESSES });
    expect(response.headers.connection).toBe('close');
    // Generous: the limit is checked about once a second; before, the request was held as long as the bytes came.
    expect(response.ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(response.ms).toBeLessThan(REQUEST_TIMEOUT_MS + 5000);
    expect((await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM processes'))[0]?.count).toBe(
      processes,
    );
  });
});

describe('answers given before the body has arrived', () => {
  it('close the connection at once, so a refused body cannot be trickled to hold it; without a body it is kept', async () => {
    const started = Date.now();
    const head = [
      `POST ${PROCESSES} HTTP/1.1`,
      'Host: x',
      'Content-Type: application/json',
      `Content-Length: ${100 * 1024}`,
      '',
      '{',
    ].join('\r\n');
    const refused = await sendRaw(address, head, { localAddress: '127.0.0.6', trickleMs: 200 });
    expectErrorBody(refused, 401);
    expect(refused.headers.connection).toBe('close');
    expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS);

    const request = (path: string) => [`GET ${path} HTTP/1.1`, 'Host: x', '', ''].join('\r\n');
    const lastRequest = request('/nowhere').replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n');
    const kept = await sendRaw(address, `${request('/rest/api/participants')}${lastRequest}`, {
      localAddress: '127.0.0.6',
      keepWriting: true,
    });
    expect(kept.statusCode).toBe(401);
    expect(kept.body).toMatch(/HTTP\/1\.1 404/);
  });
});

describe('requests in flight per client address', () => {
  it('beyond the cap an address is answered 429 at once, while other addresses are served; its slots come back', async () => {
    const held = Array.from({ length: MAX_REQUESTS_PER_ADDRESS }, () => slowBody('127.0.0.2'));
    await settle(300);

    const refused = await get('127.0.0.2');
    const body = expectErrorBody(refused, 429);
    expect(body.message).toMatch(/too many requests in flight/i);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers.connection).toBe('close');
    // A slow body beyond the cap is refused as it arrives, not held until the time limit.
    const refusedSlow = await slowBody('127.0.0.2');
    expect(refusedSlow.statusCode).toBe(429);
    expect(refusedSlow.ms).toBeLessThan(REQUEST_TIMEOUT_MS);

    expect((await get('127.0.0.3')).statusCode).toBe(200);

    for (const response of await Promise.all(held)) expect(response.statusCode).toBe(408);
    expect((await get('127.0.0.2')).statusCode).toBe(200);
  });
});
