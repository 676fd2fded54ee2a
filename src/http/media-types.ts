import accepts from '@fastify/accepts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { synchronousHook } from './synchronous-hook.js';
import { NotAcceptableError, UnsupportedMediaTypeError } from '../core/errors.js';

export const JSON_MEDIA_TYPE = 'application/json';

/** `processes.find` becomes `application/vnd.registry.processes.find.v1+json`. */
export function vendorMediaType(operation: string): string {
  return `application/vnd.registry.${operation}.v1+json`;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation's media type name, such as `processes.find`; other accepted spellings follow it. */
    mediaTypes?: readonly string[];
    /** The array variant of a find operation, such as `processes.stream`. */
    streamMediaType?: string;
  }
  interface FastifyRequest {
    /** True when the client asked for the array variant of a find operation. */
    wantsStream: boolean;
  }
}

interface Negotiation {
  /** Candidates in order of preference; the plain JSON type comes last, so `*\/*` picks the versioned one. */
  candidates: string[];
  /** The operation's own versioned types, in its order. */
  ownTypes: string[];
  streamType?: string;
  bodyTypes: Set<string>;
  /** The answer's media type for each Accept header met so far; null: none of the candidates (406). */
  chosenByAccept: Map<string, string | null>;
}

/** Clients send few distinct, short Accept headers; the remembered choices are dropped when more arrive. */
const MAX_REMEMBERED_ACCEPTS = 256;
const MAX_REMEMBERED_ACCEPT_LENGTH = 256;

const negotiations = new WeakMap<object, Negotiation>();

function negotiationOf(request: FastifyRequest): Negotiation | undefined {
  const config = request.routeOptions.config;
  if (!config.mediaTypes) return undefined;
  let negotiation = negotiations.get(config);
  if (!negotiation) {
    const own = config.mediaTypes.map(vendorMediaType);
    const streamType = config.streamMediaType ? vendorMediaType(config.streamMediaType) : undefined;
    const types = [...own, ...(streamType ? [streamType] : []), JSON_MEDIA_TYPE];
    negotiation = {
      // The charset-qualified forms let an Accept with `;charset=UTF-8` match.
      candidates: types.flatMap((type) => [type, `${type};charset=utf-8`]),
      ownTypes: own,
      streamType,
      bodyTypes: new Set([...own, JSON_MEDIA_TYPE]),
      chosenByAccept: new Map(),
    };
    negotiations.set(config, negotiation);
  }
  return negotiation;
}

function bareType(mediaType: string): string {
  return (mediaType.split(';')[0] ?? '').trim().toLowerCase();
}

/**
 * The answer's media type for the Accept headers clients send most, which need no parsing: none, `*\/*`, or exactly one
 * of the operation's own versioned types (`ownTypes`, from `vendorMediaType`, the first preferred) or
 * `application/json`; undefined for any other. What the negotiation below chooses for them, and what an answer made
 * before the framework goes by.
 */
export function plainResponseType(accept: string | undefined, ownTypes: readonly string[]): string | undefined {
  if (accept === undefined || accept.trim() === '' || accept === '*/*') return ownTypes[0];
  return accept === JSON_MEDIA_TYPE || ownTypes.includes(accept) ? accept : undefined;
}

/** The media type of the answer, chosen once per Accept header: parsing it took a tenth of a cached read. */
function responseTypeOf(request: FastifyRequest, negotiation: Negotiation): string | null {
  const acceptHeader = request.headers.accept ?? '';
  const remembered = negotiation.chosenByAccept.get(acceptHeader);
  if (remembered !== undefined) return remembered;
  const chosen =
    plainResponseType(acceptHeader, negotiation.ownTypes) ?? request.accepts().type(negotiation.candidates);
  const responseType = typeof chosen === 'string' ? bareType(chosen) : null;
  if (acceptHeader.length > MAX_REMEMBERED_ACCEPT_LENGTH) return responseType;
  if (negotiation.chosenByAccept.size >= MAX_REMEMBERED_ACCEPTS) negotiation.chosenByAccept.clear();
  negotiation.chosenByAccept.set(acceptHeader, responseType);
  return responseType;
}

/**
 * Content negotiation of docs/spec/DECISIONS.md: the versioned type, `application/json`, wildcards or no Accept at all;
 * anything else is 406. A body in a type the operation does not take is 415, checked before it is parsed.
 */
async function mediaTypes(fastify: FastifyInstance) {
  await fastify.register(accepts);
  fastify.decorateRequest('wantsStream', false);

  fastify.addContentTypeParser(
    /^application\/vnd\.registry\.[a-z.-]+\.v\d+\+json/i,
    { parseAs: 'string' },
    fastify.getDefaultJsonParser('error', 'error'),
  );

  fastify.addHook(
    'onRequest',
    synchronousHook((request, reply) => {
      const negotiation = negotiationOf(request);
      if (!negotiation) return;
      const responseType = responseTypeOf(request, negotiation);
      if (responseType === null) {
        throw new NotAcceptableError([...new Set(negotiation.candidates.map(bareType))]);
      }
      request.wantsStream = responseType === negotiation.streamType;
      reply.type(`${responseType};charset=UTF-8`);

      if (request.routeOptions.schema?.body) {
        const contentType = request.headers['content-type'];
        if (contentType !== undefined && !negotiation.bodyTypes.has(bareType(contentType))) {
          throw new UnsupportedMediaTypeError(contentType, [...negotiation.bodyTypes]);
        }
      }
    }),
  );
}

export default fp(mediaTypes, { name: 'media-types' });
