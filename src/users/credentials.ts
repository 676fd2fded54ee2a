import { hash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyRequest } from 'fastify';
import type { Caller, CredentialVerifier } from '../http/auth.js';
import type { SecurityEvent, SecurityEventLog } from '../http/security-events.js';
import { TooManyRequestsError } from '../core/errors.js';
import type { ChangeNotice } from '../db/change-log.js';
import type { Database } from '../db/database.js';
import { hashingQueue, type HashingQueueOptions } from './hashing-queue.js';
import {
  signInThrottle,
  type SignInThrottle,
  type SignInThrottleOptions,
  type PairLock,
  type SignInLock,
} from '../sign-in-locks/sign-in-throttle.js';
import { unknownUserHash, verifyPassword } from './password.js';
import { findCredentials } from './repository.js';
import { followLocks, MAX_LOCKS_PER_ADDRESS, storeLock } from '../sign-in-locks/sign-in-locks.js';
import type { StillVerified } from '../sessions/sessions.js';
import { MAX_USERNAME_LENGTH } from '../core/username.js';

export interface CredentialCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  /** Slowing down and refusing repeated failures (see sign-in-locks/sign-in-throttle.ts). */
  throttle?: SignInThrottleOptions;
  /** The turns of the password checks themselves (see hashing-queue.ts). */
  hashing?: HashingQueueOptions;
  /** Where failed sign-ins and locks are logged and counted (http/security-events.ts); nowhere without it. */
  events?: SecurityEventLog;
  /** A lock that could not be stored (it still holds in this process) or read; see sign-in-locks/sign-in-locks.ts. */
  onError?: (error: unknown) => void;
}

export interface Credentials extends CredentialVerifier {
  /**
   * Checks a password as a sign-in does (the same throttle, locks and turns), never from the cache: the current
   * password of a user who changes it. A wrong one is the security event `password_change_failed`.
   */
  checkPassword(username: string, password: string, request: FastifyRequest): Promise<Caller | null>;
  /**
   * Whether a password hash is still the one `caller` was verified against (a session opens only then): what is kept
   * of it is a keyed digest, as of the credentials, not the hash.
   */
  verifiedWith(caller: Caller): StillVerified;
  /** Forgets every verified credential. */
  forgetAll(): void;
  /**
   * Holds the sign-in locks in force and then each one stored on any instance (sign-in-locks/sign-in-locks.ts), so
   * this process refuses what the database holds; resolves to the function that stops following.
   */
  followLocks(): Promise<() => Promise<void>>;
  /**
   * Hears every committed change (the change log's ChangeNotice): a user's forgets every verified credential; a sign-in
   * lock's, an ADMIN's lift on any instance, drops the lock here.
   */
  onChange(notice: ChangeNotice): void;
}

const NO_EVENTS: SecurityEventLog = { record: () => undefined };
/** Lifts remembered (an ADMIN's, rare): enough to outlast any read that began before one. */
const MAX_REMEMBERED_LIFTS = 10_000;

/** Names the refused username on a 429 of the throttle or the turns, for its security event. */
function naming(username: string) {
  return (error: unknown): never => {
    if (error instanceof TooManyRequestsError && error.username === undefined) error.username = username;
    throw error;
  };
}

/**
 * Verifies HTTP Basic credentials against the users table. A verified pair is remembered for a short time
 * under a SHA-256 of a key made at start-up and kept only in memory, username and password, so the cache
 * holds no password and nothing from which one could be checked offline. One call of `hash` per request:
 * an HMAC object per request (key import, two hash objects) was a sixth of the main thread under load.
 */
export function credentialVerifier(db: Database, options: CredentialCacheOptions = {}): Credentials {
  const ttlMs = options.ttlMs ?? 60_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const events = options.events ?? NO_EVENTS;
  const key = randomBytes(32).toString('base64');
  const verified = new Map<string, { caller: Caller; expires: number }>();
  // Bumped by forgetAll: a check that read the users table before a change must not cache what it read.
  let generation = 0;
  const throttle = signInThrottle(options.throttle);
  // Wrong current passwords of a password change are counted apart: the right password the same client signs in with
  // (its tab's Basic credentials, checked again whenever the cache is dropped) ends a sign-in's count, and must not end
  // the count of guesses at the password it does not know. Their lock is a sign-in lock all the same.
  const changes = signInThrottle(options.throttle);
  // Both hold every lock: a lock refuses a sign-in and a password change alike, and a lift ends it for both.
  const both = [throttle, changes];
  const hashing = hashingQueue(options.hashing);
  // The same credentials sent again while they are being checked wait for that check instead of making another:
  // a client's first burst costs one check, and a guesser repeating a password gains nothing.
  const checking = new Map<string, Promise<Caller | null>>();

  function forgetAll() {
    generation += 1;
    verified.clear();
  }

  const cacheKey = (username: string, password: string) =>
    hash('sha256', `${key}${username}\u0000${password}`, 'base64');
  const hashDigest = (passwordHash: string) => hash('sha256', `${key}\u0000${passwordHash}`, 'base64');
  // Each verified caller (the object the cache hands out again) with the digest of the password hash it matched.
  const verifiedHashes = new WeakMap<Caller, string>();
  const onError = options.onError ?? (() => undefined);
  const maxLocksPerAddress = options.throttle?.maxLocksPerAddress ?? MAX_LOCKS_PER_ADDRESS;
  const endOf = (lock: SignInLock) => ({ lockedUntil: new Date(lock.until).toISOString() });

  /**
   * Stores a lock this process made, so that every instance refuses the pair too (it holds here meanwhile), and holds
   * what the store left refusing it: the lock, or its address's as a whole.
   */
  function store(lock: PairLock, request: FastifyRequest) {
    events.record(request, 'sign_in_locked', lock.username, endOf(lock));
    storeLock(db, lock, maxLocksPerAddress).then((stored) => {
      if (stored.addressLocked) events.record(request, 'sign_in_address_locked', lock.username, endOf(stored.lock));
      hold(stored.lock);
    }, onError);
  }

  /**
   * One password check in its turn, counted by `counts` once the turns admit it (refused while the pair is locked);
   * null when it fails.
   */
  async function checked(
    username: string,
    password: string,
    request: FastifyRequest,
    counts: SignInThrottle,
    failure: SecurityEvent,
  ) {
    const address = request.ip;
    throttle.check(username, address);
    const user = await hashing
      .run(
        address,
        async () => {
          try {
            const found = await findCredentials(db, username);
            return (await verifyPassword(password, found?.passwordHash ?? unknownUserHash())) ? found : undefined;
          } catch (error) {
            counts.abandoned(username, address);
            throw error;
          }
        },
        () => counts.begin(username, address),
      )
      .catch(naming(username));
    if (!user) {
      const { lock, delayMs } = counts.failed(username, address);
      events.record(request, failure, username);
      if (lock) {
        for (const each of both) each.lock(lock);
        store(lock, request);
      }
      if (delayMs > 0) await sleep(delayMs);
      return null;
    }
    counts.succeeded(username, address);
    const { passwordHash, ...caller } = user;
    verifiedHashes.set(caller, hashDigest(passwordHash));
    return caller;
  }

  async function check(
    username: string,
    password: string,
    request: FastifyRequest,
    entryKey: string,
  ): Promise<Caller | null> {
    const readAt = generation;
    const caller = await checked(username, password, request, throttle, 'sign_in_failed');
    if (!caller || readAt !== generation) return caller;
    if (verified.size >= maxEntries) verified.delete(verified.keys().next().value as string);
    verified.set(entryKey, { caller, expires: Date.now() + ttlMs });
    return caller;
  }

  // A lifted lock's row is gone for good (a new lock of the pair is a new row): once heard, its id is never held again,
  // whatever a read that began before the lift answers.
  const lifted = new Set<string>();
  const hold = (lock: SignInLock) => {
    for (const each of both) each.lock(lock);
    // Lifted meanwhile: what this process held of it (also a lock it made, stored since) goes too.
    if (lifted.has(lock.id as string)) for (const each of both) each.lift(lock.id as string);
  };
  const lift = (id: string) => {
    lifted.add(id);
    if (lifted.size > MAX_REMEMBERED_LIFTS) lifted.delete(lifted.values().next().value as string);
    for (const each of both) each.lift(id);
  };

  return {
    async verify(username, password, request) {
      // No user has a longer name: refused at once, and no memory is spent on it.
      if (username.length > MAX_USERNAME_LENGTH) {
        events.record(request, 'sign_in_failed', username);
        return null;
      }
      // Refused before the cache too: a cache hit would tell a locked-out guesser the password is right.
      throttle.check(username, request.ip);
      const entryKey = cacheKey(username, password);
      const cached = verified.get(entryKey);
      if (cached && cached.expires > Date.now()) return cached.caller;
      verified.delete(entryKey);
      const running = checking.get(entryKey);
      if (running) return running;
      const result = check(username, password, request, entryKey).finally(() => checking.delete(entryKey));
      checking.set(entryKey, result);
      return result;
    },
    checkPassword: (username, password, request) =>
      checked(username, password, request, changes, 'password_change_failed'),
    verifiedWith: (caller) => (passwordHash) => verifiedHashes.get(caller) === hashDigest(passwordHash),
    forgetAll,
    followLocks: () => followLocks(db, hold, { pollMs: options.throttle?.lockPollMs, onError }),
    onChange(notice) {
      if (notice.resource === 'user') forgetAll();
      // The log's only change of a lock is its lift, heard and applied before the answer that made it (catchingUpAfterWrites).
      else if (notice.resource === 'sign-in-lock') lift(notice.identifier);
    },
  };
}
