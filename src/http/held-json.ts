/**
 * Answers assembled from JSON already made. A participant's answer is some 14 kB, nearly all of it its processes,
 * which are catalogue rows held deep-frozen and shared by every answer until the catalogue changes: serializing them
 * and encoding the string again for each answer took a quarter of a participant read's time. A held object is
 * serialized once per schema, by the route's own serializer, and kept as bytes; an answer is its own few fields
 * around them, joined as bytes. What a client receives is byte for byte what the schema's serializer writes.
 */
import type { FastifyReply } from 'fastify';
import type { TSchema } from 'typebox';

type Serialize = (value: unknown) => string;

/** The bytes of held objects, by the schema that serialized them; an object goes when the catalogue drops it. */
const heldBytes = new WeakMap<TSchema, WeakMap<object, Buffer>>();

const COMMA = Buffer.from(',');
const OPEN_ARRAY = Buffer.from('[');
const CLOSE_ARRAY = Buffer.from(']');
const OPEN_OBJECT = Buffer.from('{');
const CLOSE_OBJECT = Buffer.from('}');

/** `value` serialized by `schema` with the route's serializer; a frozen (held) object once, then its kept bytes. */
export function jsonOf(reply: FastifyReply, schema: TSchema, value: object): Buffer {
  const serialize = () => Buffer.from((reply.compileSerializationSchema(schema as Record<string, unknown>) as Serialize)(value));
  if (!Object.isFrozen(value)) return serialize();
  let bySchema = heldBytes.get(schema);
  if (!bySchema) heldBytes.set(schema, (bySchema = new WeakMap()));
  let bytes = bySchema.get(value);
  if (!bytes) bySchema.set(value, (bytes = serialize()));
  return bytes;
}

/** `[a,b,…]` of serialized values. */
export function jsonArray(items: readonly Buffer[]): Buffer {
  return Buffer.concat([OPEN_ARRAY, ...items.flatMap((item, index) => (index === 0 ? [item] : [COMMA, item])), CLOSE_ARRAY]);
}

/**
 * Serialized objects as one, their properties in the order given: `{"a":1}` and `{"b":2}` make `{"a":1,"b":2}`. The
 * properties must be the schema's in its order, as its serializer would write them.
 */
export function jsonObject(parts: readonly Buffer[]): Buffer {
  const members = parts.map((part) => part.subarray(1, -1)).filter((inner) => inner.length > 0);
  return Buffer.concat([OPEN_OBJECT, ...members.flatMap((inner, index) => (index === 0 ? [inner] : [COMMA, inner])), CLOSE_OBJECT]);
}

/** `{"name":value}` of a serialized value. */
export function jsonProperty(name: string, value: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`{${JSON.stringify(name)}:`), value, CLOSE_OBJECT]);
}

/** Answers JSON assembled here: the bytes the route's response schema describes, which Fastify sends as they are. */
export const sendJson = (reply: FastifyReply, json: Buffer): FastifyReply => reply.send(json);
