import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ValidationError } from '../core/errors.js';
import type { Queryable } from '../db/database.js';

const CIPHER = 'aes-256-gcm';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const POSITION_BYTES = 8;
/** A cursor: its nonce, its tag and the sealed position, in base64url (48 characters). */
const CURSOR = new RegExp(`^[A-Za-z0-9_-]{${((NONCE_BYTES + TAG_BYTES + POSITION_BYTES) * 4) / 3}}$`);

/** 400 in the common error body: `after` is no cursor this registry gave out. */
function notACursor(cursor: string): ValidationError {
  return ValidationError.of('feedFilter', [
    {
      field: 'after',
      code: 'Cursor',
      rejectedValue: cursor,
      defaultMessage:
        "is not a cursor of this registry's change feed: send the `next` of a page, or no `after` to read from the start",
    },
  ]);
}

/**
 * The change feed's cursors: a position in the change log sealed with the registry's key (AES-256-GCM, a new nonce
 * each time). The position counts every provider's changes, and a provider sees its own participants' only: sealed,
 * its cursor tells it neither how far the log has gone nor whether it moved, and one changed or made up is refused.
 * The key is the database's (migration 073): the same for every instance and standby, so a cursor goes on anywhere.
 */
export class FeedCursors {
  private key: Promise<Buffer> | undefined;

  /** `db`: where the key is read, once (a read that fails is tried again at the next cursor). */
  constructor(private readonly db: Queryable) {}

  async cursorOf(position: number): Promise<string> {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(CIPHER, await this.keyOnce(), nonce);
    const plain = Buffer.alloc(POSITION_BYTES);
    plain.writeBigUInt64BE(BigInt(position));
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([nonce, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  /** The position `cursor` seals; a 400 naming `after` when this registry did not seal it. */
  async positionOf(cursor: string): Promise<number> {
    if (!CURSOR.test(cursor)) throw notACursor(cursor);
    const bytes = Buffer.from(cursor, 'base64url');
    const decipher = createDecipheriv(CIPHER, await this.keyOnce(), bytes.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(bytes.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    try {
      const plain = Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]);
      return Number(plain.readBigUInt64BE());
    } catch {
      throw notACursor(cursor);
    }
  }

  private keyOnce(): Promise<Buffer> {
    this.key ??= readKey(this.db).catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }
}

async function readKey(db: Queryable): Promise<Buffer> {
  const [row] = await db.query<{ key: Uint8Array }>("SELECT key FROM registry_keys WHERE name = 'change-feed-cursor'");
  if (!row) throw new Error("the change feed's cursor key is missing (migration 073)");
  return Buffer.from(row.key);
}
