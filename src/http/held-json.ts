/**
 * Answers assembled from JSON already made. A participant's answer is some 14 kB, nearly all of it its processes,
 * which are catalogue rows held deep-frozen and shared by every answer until the catalogue changes: serializing them
 * and encoding the string again for each answer took a quarter of a participant read's time. A held object is
 * serialized once per schema and kept as bytes; an answer is its own few fields
 * around them, joined as bytes. What a client receives is byte for byte what the schema's serializer writes: the
 * serializer is Fastify's own compiler with its defaults (the application sets no other, and no shared schemas), so an
 * answer made before the framework (http/early-answers/) is the route's too.
 */
import buildSerializerCompiler from '@fastify/fast-json-stringify-compiler';
import type { FastifyReply } from 'fastify';
import type { TSchema } from 'typebox';

type Serialize = (value: unknown) => string;

const compile = buildSerializerCompiler()({}, undefined);
const serializers = new WeakMap<TSchema, Serialize>();

/** The bytes of held objects, by the schema that serialized them; an object goes when the catalogue drops it. */
const heldBytes = new WeakMap<TSchema, WeakMap<object, Buffer>>();

const COMMA = Buffer.from(',');
const OPEN_ARRAY = Buffer.from('[');
const CLOSE_ARRAY = Buffer.from(']');
const OPEN_OBJECT = Buffer.from('{');
const CLOSE_OBJECT = Buffer.from('}');

function serializerOf(schema: TSchema): Serialize {
  let serialize = serializers.get(schema);
  if (!serialize) {
    serialize = compile({
      schema: schema as Record<string, unknown>,
      method: 'GET',
      url: '',
      httpStatus: '200',
    }) as Serialize;
    serializers.set(schema, serialize);
  }
  return serialize;
}

/** `value` serialized by `schema`; a frozen (held) object once, then its kept bytes. */
export function jsonOf(schema: TSchema, value: object): Buffer {
  const serialize = () => Buffer.from(serializerOf(schema)(value));
  if (!Object.isFrozen(value)) return serialize();
  let bySchema = heldBytes.get(schema);
  if (!bySchema) heldBytes.set(schema, (bySchema = new WeakMap()));
  let bytes = bySchema.get(value);
  if (!bytes) bySchema.set(value, (bytes = serialize()));
  return bytes;
}

/** `[a,b,…]` of serialized values. */
export function jsonArray(items: readonly Buffer[]): Buffer {
  return Buffer.concat([
    OPEN_ARRAY,
    ...items.flatMap((item, index) => (index === 0 ? [item] : [COMMA, item])),
    CLOSE_ARRAY,
  ]);
}

/**
 * Serialized objects as one, their properties in the order given: `{"a":1}` and `{"b":2}` make `{"a":1,"b":2}`. The
 * properties must be the schema's in its order, as its serializer would write them.
 */
export function jsonObject(parts: readonly Buffer[]): Buffer {
  const members = parts.map((part) => part.subarray(1, -1)).filter((inner) => inner.length > 0);
  return Buffer.concat([
    OPEN_OBJECT,
    ...members.flatMap((inner, index) => (index === 0 ? [inner] : [COMMA, inner])),
    CLOSE_OBJECT,
  ]);
}

/** `{"name":value}` of a serialized value. */
export function jsonProperty(name: string, value: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`{${JSON.stringify(name)}:`), value, CLOSE_OBJECT]);
}

/** Answers JSON assembled here: the bytes the route's response schema describes, which Fastify sends as they are. */
export const sendJson = (reply: FastifyReply, json: Buffer): FastifyReply => reply.send(json);
