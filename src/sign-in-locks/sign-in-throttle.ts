import { TooManyRequestsError } from '../core/errors.js';
import { usernameKey } from '../core/username.js';

export interface SignInThrottleOptions {
  /** Failures of one username (from anywhere) answered at once; later ones are answered more and more slowly. */
  freeFailures?: number;
  /** The delay of the first slowed failure; it doubles with each further failure, up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /**
   * Password checks of one username from one client address, running or failed, after which that address is
   * refused with 429; once that many have failed, it is locked for `lockMs`.
   */
  maxFailures?: number;
  /** How long such a lock lasts. */
  lockMs?: number;
  /** Failures older than this are forgotten. */
  windowMs?: number;
  /**
   * The two that follow are the store's (sign-in-locks.ts), not the throttle's, which holds whatever is stored. Locks of
   * usernames one client address may hold; at one more, the address is locked as a whole (SIGN_IN_MAX_LOCKS_PER_ADDRESS).
   */
  maxLocksPerAddress?: number;
  /** How often the locks in force are read again from the database and the ended ones dropped. */
  lockPollMs?: number;
  /**
   * Usernames and pairs whose failures are counted, at most; those counted longest ago are forgotten first, so memory
   * stays bounded. Locks are kept apart and never forgotten before they end.
   */
  maxEntries?: number;
}

/**
 * A (username, client address) pair refused until `until` (ms since the epoch), or without a username the address as a
 * whole (every username from it); `id` once it is stored (sign-in-locks.ts).
 */
export interface SignInLock {
  id?: string;
  username?: string;
  address: string;
  until: number;
}

/** The lock the throttle makes: of one pair. */
export type PairLock = SignInLock & { username: string };

export interface SignInThrottle {
  /** Throws the 429 when this username (or every one) is refused for this address, before any password is checked. */
  check(username: string, address: string): void;
  /** Counts a password check about to run (one the hashing queue admitted), or throws the 429 when this address has no check left. */
  begin(username: string, address: string): void;
  /** Ends a begun check that was not made. */
  abandoned(username: string, address: string): void;
  /** Records a begun check's failure: the lock it made (if it made one), and how long its answer is to wait. */
  failed(username: string, address: string): { lock?: PairLock; delayMs: number };
  /** A correct password ends the slowing down of this username and the count of this pair. */
  succeeded(username: string, address: string): void;
  /** Holds a lock made here or elsewhere (another instance, through the database) until it ends or is lifted. */
  lock(lock: SignInLock): void;
  /**
   * Lifts the stored lock `id`: the pair signs in again with a fresh count, and its username is no longer slowed; a
   * lock of an address as a whole, that address.
   */
  lift(id: string): void;
}

interface Count {
  count: number;
  /** Checks begun and not yet ended: they count against the limit, so parallel guesses cannot outrun it. */
  running: number;
  since: number;
}

/**
 * Counts of failures by key, at most `max`: beyond it the entry counted longest ago with no check running is dropped
 * (the running ones are few: the hashing queue bounds them). Entries past the window are treated as gone.
 */
function boundedCounts(max: number, windowMs: number) {
  const entries = new Map<string, Count>();
  const ended = (entry: Count, now: number) => entry.since + windowMs < now && entry.running === 0;
  function evictOne() {
    for (const [key, entry] of entries) {
      if (entry.running === 0) return void entries.delete(key);
    }
  }
  return {
    get(key: string, now: number): Count | undefined {
      const entry = entries.get(key);
      if (entry && ended(entry, now)) {
        entries.delete(key);
        return undefined;
      }
      return entry;
    },
    /** The entry of `key`, made the newest; a new one when there was none. */
    touch(key: string, now: number): Count {
      const entry = this.get(key, now) ?? { count: 0, running: 0, since: now };
      entries.delete(key);
      entries.set(key, entry);
      if (entries.size > max) evictOne();
      return entry;
    },
    delete: (key: string) => entries.delete(key),
  };
}

/**
 * The locks in force, apart from the counts: a flood of checks of other usernames can evict counts, never a lock. Each
 * lock costs `maxFailures` password checks, whose rate SIGN_IN_CHECKS_AT_ONCE bounds, so the locks in force are bounded
 * by that rate over one lock's time; a lock ends with its time (dropped when met, and from the oldest on as others come).
 */
function heldLocks() {
  const byPair = new Map<string, SignInLock>();
  const pairById = new Map<string, string>();
  const drop = (pair: string) => {
    const held = byPair.get(pair);
    if (held?.id !== undefined) pairById.delete(held.id);
    byPair.delete(pair);
  };
  return {
    get(pair: string, now: number): SignInLock | undefined {
      const held = byPair.get(pair);
      if (held && held.until <= now) {
        drop(pair);
        return undefined;
      }
      return held;
    },
    set(pair: string, lock: SignInLock, now: number) {
      drop(pair);
      byPair.set(pair, lock);
      if (lock.id !== undefined) pairById.set(lock.id, pair);
      for (const [oldest, held] of byPair) {
        if (held.until > now) break;
        drop(oldest);
      }
    },
    /** Drops the lock `id`; the pair it held, if it held one. */
    lift(id: string): string | undefined {
      const pair = pairById.get(id);
      if (pair !== undefined) drop(pair);
      return pair;
    },
  };
}

/**
 * Slows down password guessing against one username and then refuses it with 429 for a while.
 * Slowing counts failures per username from every address, so a guesser spread over many addresses is slowed
 * too; it delays only the answers to failures, never a right password. The refusal is per username and client
 * address (the one REGISTRY_TRUSTED_PROXIES lets through), so a guesser cannot lock the owner's clients elsewhere
 * out. Unknown usernames are treated exactly like known ones, so the throttle tells nobody which exist.
 */
export function signInThrottle(options: SignInThrottleOptions = {}): SignInThrottle {
  const freeFailures = options.freeFailures ?? 3;
  const firstDelayMs = options.firstDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 4000;
  const maxFailures = options.maxFailures ?? 10;
  const lockMs = options.lockMs ?? 5 * 60_000;
  const windowMs = options.windowMs ?? 15 * 60_000;
  const byUsername = boundedCounts(options.maxEntries ?? 10_000, windowMs);
  const byPair = boundedCounts(options.maxEntries ?? 10_000, windowMs);
  const locks = heldLocks();
  // The locks of addresses as a whole, by address: apart, so that no username's key can stand for one.
  const addresses = heldLocks();
  const pairKey = (username: string, address: string) => `${usernameKey(username)}\u0000${address}`;

  function check(username: string, address: string) {
    const now = Date.now();
    const key = pairKey(username, address);
    const lock = locks.get(key, now) ?? addresses.get(address, now);
    if (lock) throw refused(lock.until - now, username);
    // The checks still running may all fail and lock the address: asked again in a second, it is told.
    const pair = byPair.get(key, now);
    if (pair && pair.count + pair.running >= maxFailures) throw refused(1000, username);
  }

  return {
    check,
    begin(username, address) {
      check(username, address);
      byPair.touch(pairKey(username, address), Date.now()).running += 1;
    },
    abandoned(username, address) {
      const pair = byPair.get(pairKey(username, address), Date.now());
      if (pair) pair.running = Math.max(0, pair.running - 1);
    },
    failed(username, address) {
      const now = Date.now();
      const key = pairKey(username, address);
      const pair = byPair.touch(key, now);
      pair.running = Math.max(0, pair.running - 1);
      pair.count += 1;
      let lock: PairLock | undefined;
      if (pair.count >= maxFailures) {
        lock = { username, address, until: now + lockMs };
        locks.set(key, lock, now);
        if (pair.running === 0) byPair.delete(key);
        else Object.assign(pair, { count: 0, since: now });
      }
      const failures = byUsername.touch(usernameKey(username), now);
      failures.count += 1;
      const slowed = failures.count - freeFailures;
      return { lock, delayMs: slowed > 0 ? Math.min(maxDelayMs, firstDelayMs * 2 ** Math.min(slowed - 1, 20)) : 0 };
    },
    succeeded(username, address) {
      byUsername.delete(usernameKey(username));
      byPair.delete(pairKey(username, address));
    },
    lock(lock) {
      if (lock.username === undefined) addresses.set(lock.address, lock, Date.now());
      else locks.set(pairKey(lock.username, lock.address), lock, Date.now());
    },
    lift(id) {
      addresses.lift(id);
      const pair = locks.lift(id);
      if (pair === undefined) return;
      byPair.delete(pair);
      byUsername.delete(pair.slice(0, pair.indexOf('\u0000')));
    },
  };
}

/** The 429 of a sign-in refused before its password is checked, asked to wait `ms`: the security event `sign_in_refused`. */
function refused(ms: number, username: string): TooManyRequestsError {
  return Object.assign(tooManyRequests(ms, undefined, 'sign_in_refused'), { username });
}

/** The 429 of a sign-in refused before its password is checked, asked to wait `ms`, logged as `event`. */
export function tooManyRequests(ms: number, message?: string, event?: string): TooManyRequestsError {
  // basic-auth keeps a status it finds on the error instead of making it a 401.
  return Object.assign(new TooManyRequestsError(Math.ceil(ms / 1000), message, event), { statusCode: 429 });
}
