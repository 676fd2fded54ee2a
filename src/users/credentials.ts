import { hash, randomBytes } from 'node:crypto';
import type { Caller, CredentialVerifier } from '../http/auth.js';
import type { ChangeNotice } from '../db/change-log.js';
import type { Queryable } from '../db/database.js';
import { hashingQueue, type HashingQueueOptions } from './hashing-queue.js';
import { loginThrottle, type LoginThrottleOptions } from './login-throttle.js';
import { UNKNOWN_USER_HASH, verifyPassword } from './password.js';
import { findCredentials } from './repository.js';

export interface CredentialCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  /** Slowing down and refusing repeated failures (see login-throttle.ts). */
  throttle?: LoginThrottleOptions;
  /** The turns of the password checks themselves (see hashing-queue.ts). */
  hashing?: HashingQueueOptions;
}

export interface Credentials extends CredentialVerifier {
  /** Forgets every verified credential. */
  forgetAll(): void;
  /** Hears every committed change (the change log's ChangeNotice): a user's forgets every verified credential. */
  onChange(notice: ChangeNotice): void;
}

/**
 * Verifies HTTP Basic credentials against the users table. A verified pair is remembered for a short time
 * under a SHA-256 of a key made at start-up and kept only in memory, username and password, so the cache
 * holds no password and nothing from which one could be checked offline. One call of `hash` per request:
 * an HMAC object per request (key import, two hash objects) was a sixth of the main thread under load.
 */
export function credentialVerifier(db: Queryable, options: CredentialCacheOptions = {}): Credentials {
  const ttlMs = options.ttlMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const key = randomBytes(32).toString('base64');
  const verified = new Map<string, { caller: Caller; expires: number }>();
  // Bumped by forgetAll: a check that read the users table before a change must not cache what it read.
  let generation = 0;
  const throttle = loginThrottle(options.throttle);
  const hashing = hashingQueue(options.hashing);
  // The same credentials sent again while they are being checked wait for that check instead of making another:
  // a client's first burst costs one check, and a guesser repeating a password gains nothing.
  const checking = new Map<string, Promise<Caller | null>>();

  function forgetAll() {
    generation += 1;
    verified.clear();
  }

  const cacheKey = (username: string, password: string) => hash('sha256', `${key}${username}\u0000${password}`, 'base64');

  async function check(username: string, password: string, address: string, entryKey: string): Promise<Caller | null> {
    throttle.begin(username, address);
    const readAt = generation;
    const user = await hashing.run(address, async () => {
      const found = await findCredentials(db, username);
      return (await verifyPassword(password, found?.passwordHash ?? UNKNOWN_USER_HASH)) ? found : undefined;
    }).catch((error: unknown) => {
      throttle.abandoned(username, address);
      throw error;
    });
    if (!user) {
      await throttle.failed(username, address);
      return null;
    }
    throttle.succeeded(username, address);
    const { passwordHash: _, ...caller } = user;
    if (readAt !== generation) return caller;
    if (verified.size >= maxEntries) verified.delete(verified.keys().next().value as string);
    verified.set(entryKey, { caller, expires: Date.now() + ttlMs });
    return caller;
  }

  return {
    async verify(username, password, request) {
      // Refused before the cache too: a cache hit would tell a locked-out guesser the password is right.
      const address = request?.ip ?? '';
      throttle.check(username, address);
      const entryKey = cacheKey(username, password);
      const cached = verified.get(entryKey);
      if (cached && cached.expires > Date.now()) return cached.caller;
      verified.delete(entryKey);
      const running = checking.get(entryKey);
      if (running) return running;
      const checked = check(username, password, address, entryKey).finally(() => checking.delete(entryKey));
      checking.set(entryKey, checked);
      return checked;
    },
    forgetAll,
    onChange(notice) {
      if (notice.resource === 'user') forgetAll();
    },
  };
}
