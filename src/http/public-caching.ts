import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ANONYMOUS } from './auth.js';
import { SECURITY_HEADERS } from './security-headers.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A read whose answer is the same for every caller, credentials or none (the SMP's): a cache may keep it. */
    publicRead?: boolean;
  }
}

/**
 * Public reads (the SMP's, the public lookup, the catalogue's anonymous reads) answered to a caller without
 * credentials (the SMP's to any caller: it reads none) carry a validator and answer a current copy with 304. The SMP's
 * carry the configured freshness, so an HTTP cache in front may keep them; the API's keep the specification's header
 * constants (DECISIONS.md: every response carries them, `no-store` included), so only a client's own copy is
 * revalidated. Every other answer keeps the security headers' `no-store`. Caches must never keep an
 * authenticated answer: it carries `no-store`, and the public ones of routes that check credentials vary on
 * `Authorization`, so a cache never gives one to a caller with credentials.
 */

/** `Cache-Control` of a public read: with no max-age, caches may keep it but must ask again each time (`no-cache`). */
export const publicCacheControl = (maxAgeSeconds: number) =>
  maxAgeSeconds > 0 ? `public, max-age=${maxAgeSeconds}` : 'no-cache';

/** The security headers but their "never keep this" trio, which a public read's caching headers replace. */
const NEVER_KEEP = new Set(['cache-control', 'pragma', 'expires']);
const PUBLIC_SECURITY_HEADERS = Object.fromEntries(
  Object.entries(SECURITY_HEADERS).filter(([name]) => !NEVER_KEEP.has(name)),
);

/** The tags of answers whose tag is not the hash of their bytes (signed ones: `taggedAnswer`), by their bytes. */
const givenTags = new WeakMap<Buffer, string>();
/** The hashes of answers held, with the media type hashed with them, so a kept answer is hashed once. */
const hashedTags = new WeakMap<Buffer, { contentType: string; tag: string }>();

const digest = (parts: readonly (string | Buffer)[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\u0000');
  return hash.digest('base64url').slice(0, 32);
};

/**
 * A weak tag of what an answer shows, from what it is made of: a signed answer's tag need not wait for its signature
 * (a 304 is made without signing), and the signature's bytes are not what it shows.
 */
export const weakTagOf = (inputs: unknown) => `W/"${digest([JSON.stringify(inputs)])}"`;

/** `body` with `tag` as its tag, wherever it is answered from (the route, memory). */
export function taggedAnswer(body: Buffer, tag: string): Buffer {
  givenTags.set(body, tag);
  return body;
}

/** The answer's entity tag: the one given to it, else a strong tag of its media type and bytes. */
function entityTagOf(body: Buffer, contentType: string): string {
  const given = givenTags.get(body);
  if (given) return given;
  const hashed = hashedTags.get(body);
  if (hashed?.contentType === contentType) return hashed.tag;
  const tag = `"${digest([contentType, body])}"`;
  hashedTags.set(body, { contentType, tag });
  return tag;
}

const OPAQUE_TAG = /(?:W\/)?"([^"]*)"/g;
const opaquePart = (tag: string) => tag.replace(/^W\//, '');

/**
 * Whether `If-None-Match` names the tag (RFC 9110 13.1.2): `*`, or a list of tags one of which equals it by the weak
 * comparison (the quoted parts equal, `W/` or not). A header that names no tag matches nothing.
 */
function noneMatchHolds(ifNoneMatch: string | string[] | undefined, tag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const header = Array.isArray(ifNoneMatch) ? ifNoneMatch.join(',') : ifNoneMatch;
  if (header.trim() === '*') return true;
  const wanted = opaquePart(tag);
  for (const match of header.matchAll(OPAQUE_TAG)) if (`"${match[1]}"` === wanted) return true;
  return false;
}

/**
 * The headers a public answer carries: its tag, with `cacheControl` in place of the "never keep this" trio (the SMP's)
 * or beside the specification's constants when undefined (the API's); `vary` names the request headers it depends on.
 */
function publicAnswerHeaders(tag: string, cacheControl: string | undefined, vary?: string): Record<string, string> {
  const kept =
    cacheControl === undefined ? SECURITY_HEADERS : { ...PUBLIC_SECURITY_HEADERS, 'cache-control': cacheControl };
  return { ...kept, etag: tag, ...(vary ? { vary } : {}) };
}

/** A held answer as memory sends it: 200 with its bytes, or 304 when the caller's copy is current. */
export function heldAnswerReply(
  body: Buffer,
  contentType: string,
  requestHeaders: IncomingHttpHeaders,
  cacheControl: string | undefined,
  vary?: string,
) {
  const tag = entityTagOf(body, contentType);
  const headers = publicAnswerHeaders(tag, cacheControl, vary);
  if (noneMatchHolds(requestHeaders['if-none-match'], tag)) return { status: 304, headers, body: undefined };
  return { status: 200, headers: { ...headers, 'content-type': contentType, 'content-length': body.length }, body };
}

/** What the public lookup's answers depend on besides the path: the negotiated media type, and credentials or none. */
export const NEGOTIATED_VARY = 'Accept, Authorization';

/** `smp` for the SMP's reads, `api` for the API's anonymous reads asked without credentials, else undefined. */
function publicReadOf(request: FastifyRequest): 'smp' | 'api' | undefined {
  const { publicRead, access } = request.routeOptions.config;
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
  if (publicRead === true) return 'smp';
  return Array.isArray(access) && access.includes(ANONYMOUS) && request.headers.authorization === undefined
    ? 'api'
    : undefined;
}

/** Whether a public read's caller holds the answer tagged `tag` already (a route may then answer 304 before making it). */
export const callersCopyIsCurrent = (request: FastifyRequest, tag: string) =>
  publicReadOf(request) !== undefined && noneMatchHolds(request.headers['if-none-match'], tag);

const withoutNeverKeep = (reply: FastifyReply) => reply.removeHeader('pragma').removeHeader('expires');

function cachingOf(request: FastifyRequest, reply: FastifyReply, payload: unknown, smpCacheControl: string): unknown {
  const read = publicReadOf(request);
  if (read === undefined) return payload;
  const cacheControl = read === 'smp' ? smpCacheControl : undefined;
  const vary = request.routeOptions.config.mediaTypes ? NEGOTIATED_VARY : undefined;
  const tagged = (tag: string) => {
    if (cacheControl !== undefined) withoutNeverKeep(reply);
    reply.headers(publicAnswerHeaders(tag, cacheControl, vary));
  };
  if (reply.statusCode === 304) {
    // The route found the caller's copy current without making the answer (a signed one, unsigned): its tag is set.
    tagged(String(reply.getHeader('etag')));
    return null;
  }
  if (reply.statusCode !== 200 || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) return payload;
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const tag = entityTagOf(body, String(reply.getHeader('content-type') ?? ''));
  tagged(tag);
  if (!noneMatchHolds(request.headers['if-none-match'], tag)) return body;
  reply.code(304).removeHeader('content-type').removeHeader('content-length');
  return null;
}

async function publicCaching(fastify: FastifyInstance, options: { cacheControl: string }) {
  fastify.addHook('onSend', (request, reply, payload, done) => {
    done(null, cachingOf(request, reply, payload, options.cacheControl));
  });
}

export default fp(publicCaching, { name: 'public-caching' });
