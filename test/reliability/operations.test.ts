import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { loggerOptions } from '../../src/operations/logging.js';
import { buildManagementServer } from '../../src/operations/management.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { basic, startTestApp, type TestApp } from '../helpers/app.js';
import { uniqueOrganization } from '../helpers/participants.js';

/** The service as server.ts wires it, logging into `lines`, with its management server beside it. */
let t: TestApp;
let app: App;
let management: ReturnType<typeof buildManagementServer>;
const lines: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  app = await buildApp({
    db: t.db,
    logger: loggerOptions('trace', { write: (line: string) => void lines.push(line) }),
  });
  await app.ready();
  management = buildManagementServer({ db: t.db, metrics: app.metrics });
});
afterAll(async () => {
  await management.server.close();
  await app.close();
  await t.close();
});

describe('health', () => {
  it('is live and ready while the database answers', async () => {
    const live = await management.server.inject({ url: '/health/live' });
    expect(live.statusCode).toBe(200);
    const ready = await management.server.inject({ url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'UP', database: 'UP' });
  });

  it('is not ready once shutdown began, so balancers stop sending traffic', async () => {
    const draining = buildManagementServer({ db: t.db, metrics: app.metrics });
    draining.drain();
    const ready = await draining.server.inject({ url: '/health/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ status: 'DOWN' });
    expect((await draining.server.inject({ url: '/health/live' })).statusCode).toBe(200);
    await draining.server.close();
  });

  it('is not part of the API port', async () => {
    expectErrorBody(await app.inject({ url: '/health/ready' }), 404);
    expectErrorBody(await app.inject({ url: '/metrics' }), 404);
  });
});

describe('metrics', () => {
  it('counts and times requests per route pattern and status, and shows the database pool', async () => {
    const unknown = randomUUID();
    for (let i = 0; i < 3; i += 1) expect((await app.inject({ url: '/rest/api/processes' })).statusCode).toBe(200);
    expect((await app.inject({ url: `/rest/api/processes/${unknown}` })).statusCode).toBe(404);
    expect((await app.inject({ url: '/rest/api/participants' })).statusCode).toBe(401);

    const response = await management.server.inject({ url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = response.body;
    expect(text).toContain('http_requests_total{method="GET",route="/rest/api/processes",status="200"} 3');
    expect(text).toContain('http_requests_total{method="GET",route="/rest/api/processes/:identifier",status="404"} 1');
    expect(text).toContain('http_requests_total{method="GET",route="/rest/api/participants",status="401"} 1');
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/rest\/api\/processes",status="200"\} 3/,
    );
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/rest\/api\/processes",status="200"\} 3/,
    );
    expect(text).not.toContain(unknown);
    expect(text).toMatch(/db_pool_connections\{state="total"\} [1-9]/);
    expect(text).toMatch(/db_pool_connections\{state="idle"\} \d/);
    expect(text).toMatch(/db_pool_connections\{state="waiting"\} 0/);
    expect(text).toMatch(/process_resident_memory_bytes \d+/);
    expect(text).toMatch(/http_open_connections 0/);
  });
});

describe('request ids', () => {
  it("takes over the caller's x-request-id and answers with it, errors included", async () => {
    const ok = await app.inject({ url: '/rest/api/processes', headers: { 'x-request-id': 'trace-42.a:b' } });
    expect(ok.headers['x-request-id']).toBe('trace-42.a:b');
    const error = await app.inject({ url: '/rest/api/participants', headers: { 'x-request-id': 'trace-43' } });
    expect(error.statusCode).toBe(401);
    expect(error.headers['x-request-id']).toBe('trace-43');
  });

  it('makes one when none or an unsafe one is given', async () => {
    const none = await app.inject({ url: '/rest/api/processes' });
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    for (const unsafe of ['a b', 'x'.repeat(200), '{"level":60}', '']) {
      const response = await app.inject({ url: '/rest/api/processes', headers: { 'x-request-id': unsafe } });
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('logs', () => {
  it('are JSON lines that carry the request id, and never a password or an Authorization header', async () => {
    lines.length = 0;
    const secret = 'Sup3r-Secret-Passw0rd!';
    const requestId = `log-test-${randomUUID()}`;
    const admin = t.users.admin;
    const created = await app.inject({
      method: 'POST',
      url: '/rest/api/users',
      headers: { authorization: admin.authorization, 'x-request-id': requestId, 'content-type': 'application/json' },
      payload: { username: `logged-${randomUUID().slice(0, 8)}`, password: secret, role: 'ADMIN' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const wrong = await app.inject({
      url: '/rest/api/participants',
      headers: { authorization: basic(admin.username, secret) },
    });
    expect(wrong.statusCode).toBe(401);
    // Whoever logs a request with its headers or a body with a password gets them censored.
    app.log.info(
      { headers: { authorization: admin.authorization }, body: { password: secret }, password: secret },
      'explicit',
    );

    expect(lines.length).toBeGreaterThan(4);
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const ofRequest = entries.filter((entry) => entry.reqId === requestId);
    expect(ofRequest.map((entry) => entry.msg)).toEqual(['incoming request', 'request completed']);
    expect(ofRequest[0]).toMatchObject({ level: 30, req: { method: 'POST', url: '/rest/api/users' } });
    expect(ofRequest[1]).toMatchObject({ level: 30, res: { statusCode: 201 }, responseTime: expect.any(Number) });
    const everything = lines.join('\n');
    for (const leak of [
      secret,
      admin.password,
      admin.authorization,
      admin.authorization.slice(6),
      Buffer.from(`${admin.username}:${secret}`).toString('base64'),
    ]) {
      expect(everything).not.toContain(leak);
    }
    expect(entries.find((entry) => entry.msg === 'explicit')).toMatchObject({
      headers: { authorization: '[REDACTED]' },
      body: { password: '[REDACTED]' },
      password: '[REDACTED]',
    });
  });

  it('name the failing statement of a 5xx and its SQLSTATE, never the values it was given', async () => {
    lines.length = 0;
    const personal = `Kari Hemmelig ${randomUUID().slice(0, 8)}`;
    await t.db.query(`ALTER TABLE participants ADD CONSTRAINT refuses_one_name CHECK (contact_name <> '${personal}')`);
    try {
      const failed = await app.inject({
        method: 'POST',
        url: '/rest/api/participants',
        headers: { authorization: t.users.serviceProvider.authorization, 'content-type': 'application/json' },
        payload: {
          icd: '0192',
          organizationIdentifier: uniqueOrganization(),
          name: personal,
          processes: [],
          contact: { name: personal, email: 'kari@hemmelig.example', phoneNumber: '+47 99 99 99 99' },
        },
      });
      expectErrorBody(failed, 500);
    } finally {
      await t.db.query('ALTER TABLE participants DROP CONSTRAINT refuses_one_name');
    }
    const failure = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request failed');
    expect(failure?.err).toMatchObject({
      sqlState: '23514',
      constraint: 'refuses_one_name',
      sql: expect.stringMatching(/INSERT INTO participants/),
    });
    const everything = lines.join('\n');
    for (const leak of [personal, 'kari@hemmelig.example', '+47 99 99 99 99']) expect(everything).not.toContain(leak);
  });

  it('leave out the request lines of SMP lookups below 500 (the network makes them all the time), not those of other paths', async () => {
    lines.length = 0;
    const run = randomUUID();
    const idOf = (path: string) => `quiet-test-${run}-${path.length}`;
    const requests = {
      lookup: '/businesscard/iso6523-actorid-upis::0192:100000008',
      unsigned: '/iso6523-actorid-upis::0192:100000008',
      notAnIdentifier: '/not-an-identifier',
    };
    const answers = Object.fromEntries(
      await Promise.all(
        Object.entries(requests).map(
          async ([name, url]) => [name, await app.inject({ url, headers: { 'x-request-id': idOf(url) } })] as const,
        ),
      ),
    );
    expect([answers.lookup?.statusCode, answers.unsigned?.statusCode, answers.notAnIdentifier?.statusCode]).toEqual([
      404, 503, 404,
    ]);
    const messagesOf = (url: string) =>
      lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((entry) => entry.reqId === idOf(url))
        .map((entry) => entry.msg);
    expect(messagesOf(requests.lookup)).toEqual([]);
    // This app has no SMP key: the lookup is a 503, logged as every server error is.
    expect(messagesOf(requests.unsigned)).toEqual(expect.arrayContaining(['request completed']));
    expect(messagesOf(requests.notAnIdentifier)).toEqual(
      expect.arrayContaining(['incoming request', 'request completed']),
    );
    const metrics = await management.server.inject({ url: '/metrics' });
    expect(metrics.body).toContain(
      'http_requests_total{method="GET",route="/businesscard/:participantId",status="404"} 1',
    );
  });

  it('carry the request id on the lines a request logs itself', async () => {
    const ownLines: string[] = [];
    const own = await buildApp({
      db: t.db,
      logReads: false,
      logger: loggerOptions('info', { write: (line: string) => void ownLines.push(line) }),
    });
    try {
      const quietRead = await own.inject({ url: '/rest/api/processes', headers: { 'x-request-id': 'own-quiet' } });
      const forwarded = await own.inject({
        url: '/rest/api/processes',
        headers: { 'x-request-id': 'own-forwarded', 'x-forwarded-for': '203.0.113.9' },
      });
      expect([quietRead.statusCode, forwarded.statusCode]).toEqual([200, 200]);
      const entries = ownLines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(entries.filter((entry) => entry.reqId === 'own-quiet')).toEqual([]);
      expect(entries.filter((entry) => entry.reqId === 'own-forwarded')).toEqual([
        expect.objectContaining({ level: 40, peer: '127.0.0.1', msg: expect.stringContaining('X-Forwarded-For') }),
      ]);
    } finally {
      await own.close();
    }
  });

  it('leave out the request lines of reads when the operator turns them off (LOG_REQUESTS=false), not those of writes', async () => {
    const quietLines: string[] = [];
    const quiet = await buildApp({
      db: t.db,
      logReads: false,
      logger: loggerOptions('info', { write: (line: string) => void quietLines.push(line) }),
    });
    try {
      const admin = t.users.admin;
      const read = await quiet.inject({ url: '/rest/api/processes', headers: { 'x-request-id': 'quiet-read' } });
      expect(read.statusCode).toBe(200);
      const write = await quiet.inject({
        method: 'POST',
        url: '/rest/api/users',
        headers: {
          authorization: admin.authorization,
          'x-request-id': 'logged-write',
          'content-type': 'application/json',
        },
        payload: { username: `quiet-${randomUUID().slice(0, 8)}`, password: 'Quiet-Passw0rd-12', role: 'ADMIN' },
      });
      expect(write.statusCode, write.body).toBe(201);
      const messagesOf = (reqId: string) =>
        quietLines
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .filter((entry) => entry.reqId === reqId)
          .map((entry) => entry.msg);
      expect(messagesOf('quiet-read')).toEqual([]);
      expect(messagesOf('logged-write')).toEqual(['incoming request', 'request completed']);
    } finally {
      await quiet.close();
    }
  });
});
