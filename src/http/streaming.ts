import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { TSchema } from 'typebox';
import { escapeLineSeparators } from '../core/json.js';

const CHUNK_SIZE = 16 * 1024;

/**
 * Sends every item of `batches` as one JSON array, serialized item by item with the item's response schema,
 * so the array is never held in memory, with U+2028 and U+2029 escaped. Back-pressure comes from the stream: no batch is read before the
 * client has taken the previous one.
 */
export function sendJsonArray(reply: FastifyReply, itemSchema: TSchema, batches: AsyncIterable<readonly unknown[]>) {
  const serialize = reply.compileSerializationSchema(itemSchema as Record<string, unknown>) as (
    item: unknown,
  ) => string;
  // Items are sent in chunks of about CHUNK_SIZE characters: one socket write per item costs more than the item.
  async function* chunks() {
    let chunk = '[';
    let first = true;
    for await (const items of batches) {
      for (const item of items) {
        chunk += first ? serialize(item) : `,${serialize(item)}`;
        first = false;
        if (chunk.length < CHUNK_SIZE) continue;
        yield escapeLineSeparators(chunk);
        chunk = '';
      }
    }
    yield `${escapeLineSeparators(chunk)}]`;
  }
  return reply.send(Readable.from(chunks()));
}
