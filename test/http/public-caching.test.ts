import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SECURITY_HEADERS } from '../../src/http/security-headers.js';
import { checkedKey, SmpKeys, type SmpKey } from '../../src/smp/keys.js';
import { SmpPublisher } from '../../src/smp/publisher.js';
import { SignedAnswerCache } from '../../src/smp/signed-answer-cache.js';
import { SigningPool } from '../../src/smp/signing-pool.js';
import { participantsHeld, startTestApp, type TestApp } from '../helpers/app.js';
import { addDocumentType, addProcess } from '../helpers/catalogue.js';
import { testCertificate } from '../helpers/certificates.js';
import { addProcessTo, expectValidSignedAnswer, metadataPath, publishedParticipant } from '../helpers/smp.js';

const PUBLIC_URL = 'https://smp.example/registry';
const HOUR = 3600_000;

let t: TestApp;
let origin: string;
let current: SmpKey;
let next: SmpKey;
const cache = new SignedAnswerCache();
// The pair's clock, an hour before the rollover: a test moves it across the instant.
const rolloverAt = Date.now() + HOUR;
let offset = 0;

beforeAll(async () => {
  const [first, second] = [
    await testCertificate('public-caching.test'),
    await testCertificate('public-caching-next.test'),
  ];
  [current, next] = [checkedKey(first.key, first.cert, true), checkedKey(second.key, second.cert, true)];
  const keys = new SmpKeys(current, { key: next, from: rolloverAt }, () => Date.now() + offset);
  t = await startTestApp({ smp: { keys, publicUrl: PUBLIC_URL, cache } });
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
}, 120_000);
afterAll(async () => t.close());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${origin}${path}`, { headers });
/** The headers a 200 and a 304 share, without those that differ per request. */
const comparable = (headers: Headers) =>
  [...headers].filter(([name]) => !['x-request-id', 'date', 'content-type', 'content-length'].includes(name));
const tagOf = async (path: string, headers: Record<string, string> = {}) => {
  const answer = await get(path, headers);
  expect(answer.status, await answer.clone().text()).toBe(200);
  return answer.headers.get('etag') as string;
};

/**
 * A 304 as RFC 9110 has it: no body, the validator and the freshness a 200 would carry (the SMP's by the setting, the
 * API's the specification's constant).
 */
async function expectNotModified(answer: Response, tag: string, cacheControl = 'no-cache') {
  expect(answer.status).toBe(304);
  expect(await answer.text()).toBe('');
  expect(answer.headers.get('etag')).toBe(tag);
  expect(answer.headers.get('cache-control')).toBe(cacheControl);
  expect(answer.headers.get('x-content-type-options')).toBe(SECURITY_HEADERS['x-content-type-options']);
}

describe('the signed service metadata', () => {
  it('carries a validator, and answers its If-None-Match with 304 from memory, without the route or a signature, as the route does', async () => {
    const { path } = await publishedParticipant(t);
    const first = await get(path);
    expect(first.status).toBe(200);
    await expectValidSignedAnswer(Buffer.from(await first.arrayBuffer()), current.certificatePem);
    const tag = first.headers.get('etag') as string;
    expect(tag).toMatch(/^W\/"[\w-]+"$/);
    expect([first.headers.get('cache-control'), first.headers.get('pragma'), first.headers.get('expires')]).toEqual([
      'no-cache',
      null,
      null,
    ]);

    const routed = vi.spyOn(SmpPublisher.prototype, 'signedServiceMetadata');
    const signed = vi.spyOn(SigningPool.prototype, 'sign');
    const early = await get(path, { 'if-none-match': tag });
    expect(routed).not.toHaveBeenCalled();
    // A query string is the route's: the kept answer's 304 made there, with the same headers.
    const byRoute = await get(`${path}?again`, { 'if-none-match': tag });
    expect(routed).toHaveBeenCalledTimes(1);
    expect(signed).not.toHaveBeenCalled();
    routed.mockRestore();
    signed.mockRestore();
    await expectNotModified(early, tag);
    await expectNotModified(byRoute, tag);
    expect(comparable(early.headers)).toEqual(comparable(byRoute.headers));
    expect(comparable(early.headers)).toEqual(comparable(first.headers));
  });

  it('compares tags weakly, takes a list and `*`, and answers in full to any other tag', async () => {
    const { path } = await publishedParticipant(t);
    const tag = await tagOf(path);
    const strong = tag.slice(2);
    for (const ifNoneMatch of [tag, strong, `"other", ${tag}`, `W/"other",${strong}`, '*']) {
      expect([ifNoneMatch, (await get(path, { 'if-none-match': ifNoneMatch })).status]).toEqual([ifNoneMatch, 304]);
    }
    for (const ifNoneMatch of ['"other"', 'W/"other", "more"', 'not a tag', strong.slice(0, -2) + '"']) {
      const answer = await get(path, { 'if-none-match': ifNoneMatch });
      expect([ifNoneMatch, answer.status, answer.headers.get('etag')]).toEqual([ifNoneMatch, 200, tag]);
    }
  });

  it('tags another spelling of the participant as its own answer, and answers its 304 at the route without signing', async () => {
    const { participant, documentType, path } = await publishedParticipant(t);
    const spelled = metadataPath(participant.qualifiedIdentifier.toUpperCase(), documentType.qualifiedIdentifier);
    const [stored, other] = [await tagOf(path), await tagOf(spelled)];
    expect(other).not.toBe(stored);
    const signed = vi.spyOn(SigningPool.prototype, 'sign');
    const notModified = await get(spelled, { 'if-none-match': other });
    const full = await get(spelled, { 'if-none-match': stored });
    expect(signed).toHaveBeenCalledTimes(1);
    signed.mockRestore();
    await expectNotModified(notModified, other);
    expect([full.status, full.headers.get('etag')]).toEqual([200, other]);
  });

  it('keeps its tag while what it shows stays, and changes it with a process added, the same answer made anew, and the rollover', async () => {
    const { participant, documentType, process, path } = await publishedParticipant(t);
    const tag = await tagOf(path);
    // An answer made anew (the kept one dropped) shows the same: the same tag.
    cache.clear();
    expect(await tagOf(path)).toBe(tag);
    // A change elsewhere keeps it.
    await addProcess(t.app, t.users.authority);
    expect(await tagOf(path)).toBe(tag);

    const added = await addProcessTo(t, { participant, process }, documentType.identifier);
    const withProcess = await get(path, { 'if-none-match': tag });
    expect(withProcess.status).toBe(200);
    expect(await withProcess.text()).toContain(added.qualifiedIdentifier.split('::')[1]);
    const afterChange = withProcess.headers.get('etag') as string;
    expect(afterChange).not.toBe(tag);

    offset = 2 * HOUR;
    try {
      const rolled = await get(path, { 'if-none-match': afterChange });
      expect(rolled.status).toBe(200);
      await expectValidSignedAnswer(Buffer.from(await rolled.arrayBuffer()), next.certificatePem);
      expect(rolled.headers.get('etag')).not.toBe(afterChange);
    } finally {
      offset = 0;
      cache.clear();
    }
  });
});

describe('the other public reads', () => {
  let paths: Record<string, string>;
  beforeAll(async () => {
    const { participant } = await publishedParticipant(t);
    const organization = encodeURIComponent(participant.qualifiedIdentifier);
    paths = {
      serviceGroup: `/${organization}`,
      businessCard: `/businesscard/${organization}`,
      organizationProcesses: `/rest/api/organizations/${organization}/processes`,
      organization: `/rest/api/organizations/${organization}`,
      processes: '/rest/api/processes',
      documentTypes: '/rest/api/document-types?size=5',
    };
    await participantsHeld(t.app);
  });

  it('each carry a strong validator and answer its If-None-Match with 304; those negotiating vary on Accept and Authorization', async () => {
    for (const [name, path] of Object.entries(paths)) {
      const full = await get(path);
      expect([name, full.status]).toEqual([name, 200]);
      const tag = full.headers.get('etag') as string;
      expect([name, tag]).toEqual([name, expect.stringMatching(/^"[\w-]+"$/)]);
      expect([name, full.headers.get('vary')]).toEqual([
        name,
        path.startsWith('/rest/api/') ? 'Accept, Authorization' : null,
      ]);
      const notModified = await get(path, { 'if-none-match': tag });
      await expectNotModified(
        notModified,
        tag,
        path.startsWith('/rest/api/') ? SECURITY_HEADERS['cache-control'] : 'no-cache',
      );
      expect([name, notModified.headers.get('vary')]).toEqual([name, full.headers.get('vary')]);
    }
  });

  it("answer the public lookup's 304 from memory as the route does", async () => {
    const path = paths.organizationProcesses as string;
    const tag = await tagOf(path);
    const early = await get(path, { 'if-none-match': tag });
    const byRoute = await get(`${path}?again`, { 'if-none-match': tag });
    await expectNotModified(early, tag, SECURITY_HEADERS['cache-control']);
    await expectNotModified(byRoute, tag, SECURITY_HEADERS['cache-control']);
    expect(comparable(early.headers)).toEqual(comparable(byRoute.headers));
  });

  it('tag each media type of a negotiated answer as its own', async () => {
    const path = paths.organizationProcesses as string;
    const plain = await tagOf(path, { accept: 'application/json' });
    const versioned = await tagOf(path, { accept: 'application/vnd.registry.organizations.processes.v1+json' });
    expect(plain).not.toBe(versioned);
  });

  it("change the service group's tag when a process adds a document type to it", async () => {
    const { participant, process } = await publishedParticipant(t);
    const path = `/${encodeURIComponent(participant.qualifiedIdentifier)}`;
    const tag = await tagOf(path);
    const documentType = await addDocumentType(t.app, t.users.authority);
    await addProcessTo(t, { participant, process }, documentType.identifier);
    const changed = await get(path, { 'if-none-match': tag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(tag);
  });

  it('stay no-store for a caller with credentials, without a validator, whatever If-None-Match says', async () => {
    const tag = await tagOf(paths.processes as string);
    const authenticated = await get(paths.processes as string, {
      authorization: t.users.admin.authorization,
      'if-none-match': tag,
    });
    expect(authenticated.status).toBe(200);
    expect([authenticated.headers.get('cache-control'), authenticated.headers.get('etag')]).toEqual([
      SECURITY_HEADERS['cache-control'],
      null,
    ]);
    const refused = await get('/rest/api/users', { 'if-none-match': '*' });
    expect([refused.status, refused.headers.get('cache-control'), refused.headers.get('etag')]).toEqual([
      401,
      SECURITY_HEADERS['cache-control'],
      null,
    ]);
  });
});

describe('with PUBLIC_MAX_AGE_SECONDS', () => {
  let aged: TestApp;
  beforeAll(async () => {
    aged = await startTestApp({ publicMaxAgeSeconds: 60, smp: { keys: new SmpKeys(current), publicUrl: PUBLIC_URL } });
  });
  afterAll(async () => aged.close());

  it("lets a cache keep the SMP's answers that long; the API's public reads keep the specification's constants, an authenticated one never a validator", async () => {
    const { participant } = await publishedParticipant(aged);
    const smp = await aged.app.inject(`/${encodeURIComponent(participant.qualifiedIdentifier)}`);
    expect([smp.statusCode, smp.headers['cache-control'], smp.headers.pragma, smp.headers.etag]).toEqual([
      200,
      'public, max-age=60',
      undefined,
      expect.any(String),
    ]);
    const anonymous = await aged.app.inject('/rest/api/processes');
    expect([anonymous.headers['cache-control'], anonymous.headers.etag]).toEqual([
      SECURITY_HEADERS['cache-control'],
      expect.any(String),
    ]);
    const authenticated = await aged.app.inject({
      url: '/rest/api/processes',
      headers: { authorization: aged.users.admin.authorization },
    });
    expect([authenticated.headers['cache-control'], authenticated.headers.etag]).toEqual([
      SECURITY_HEADERS['cache-control'],
      undefined,
    ]);
  });
});
