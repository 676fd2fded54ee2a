import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { TSchema } from 'typebox';

/**
 * Sends every item of `items` as one JSON array, serialized item by item with the item's response schema,
 * so the array is never held in memory. Back-pressure comes from the stream: no row is read before the
 * client has taken the previous batch.
 */
export function sendJsonArray(reply: FastifyReply, itemSchema: TSchema, items: AsyncIterable<unknown>) {
  const serialize = reply.compileSerializationSchema(itemSchema as Record<string, unknown>) as (item: unknown) => string;
  async function* chunks() {
    let first = true;
    yield '[';
    for await (const item of items) {
      yield first ? serialize(item) : `,${serialize(item)}`;
      first = false;
    }
    yield ']';
  }
  return reply.send(Readable.from(chunks()));
}
