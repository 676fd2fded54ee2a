import { setTimeout as sleep } from 'node:timers/promises';
import { TooManyRequestsError } from '../core/errors.js';
import { usernameKey } from './username.js';

export interface LoginThrottleOptions {
  /** Failures of one username (from anywhere) answered at once; later ones are answered more and more slowly. */
  freeFailures?: number;
  /** The delay of the first slowed failure; it doubles with each further failure, up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /**
   * Password checks of one username from one client address, running or failed, after which that address is
   * refused with 429; once that many have failed, for `lockMs`.
   */
  maxFailures?: number;
  /** How long such a refusal lasts. */
  lockMs?: number;
  /** Failures older than this are forgotten. */
  windowMs?: number;
  /** Usernames and pairs remembered at most; the oldest are dropped first, so memory stays bounded. */
  maxEntries?: number;
}

export interface LoginThrottle {
  /** Throws the 429 when this username is refused for this address, before any password is checked. */
  check(username: string, address: string): void;
  /** Counts a password check about to run, or throws the 429 when this address has no check left. */
  begin(username: string, address: string): void;
  /** Ends a begun check that was not made (its hashing was refused). */
  abandoned(username: string, address: string): void;
  /** Records a begun check's failure and resolves after the delay this failure earns. */
  failed(username: string, address: string): Promise<void>;
  /** A correct password ends the slowing down and the refusal of this username. */
  succeeded(username: string, address: string): void;
}

interface Failures {
  count: number;
  /** Checks begun and not yet ended: they count against the limit, so parallel guesses cannot outrun it. */
  running: number;
  since: number;
  lockedUntil: number;
}

/** A Map that drops its oldest entries beyond `max` and treats entries past the window as gone. */
function boundedFailures(max: number, windowMs: number) {
  const entries = new Map<string, Failures>();
  return {
    get(key: string, now: number): Failures | undefined {
      const entry = entries.get(key);
      if (entry && entry.since + windowMs < now && entry.lockedUntil < now && entry.running === 0) {
        entries.delete(key);
        return undefined;
      }
      return entry;
    },
    /** The entry of `key`, made the newest; a new one when there was none. */
    touch(key: string, now: number): Failures {
      const entry = this.get(key, now) ?? { count: 0, running: 0, since: now, lockedUntil: 0 };
      entries.delete(key);
      entries.set(key, entry);
      if (entries.size > max) entries.delete(entries.keys().next().value as string);
      return entry;
    },
    delete: (key: string) => entries.delete(key),
  };
}

/**
 * Slows down password guessing against one username and then refuses it with 429 for a while.
 * Slowing counts failures per username from every address, so a guesser spread over many addresses is slowed
 * too; it delays only the answers to failures, never a right password. The refusal is per username and client
 * address (the one REGISTRY_TRUSTED_PROXIES lets through), so a guesser cannot lock the owner's clients elsewhere
 * out. Unknown usernames are treated exactly like known ones, so the throttle tells nobody which exist.
 */
export function loginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const freeFailures = options.freeFailures ?? 3;
  const firstDelayMs = options.firstDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 4000;
  const maxFailures = options.maxFailures ?? 10;
  const lockMs = options.lockMs ?? 5 * 60_000;
  const windowMs = options.windowMs ?? 15 * 60_000;
  const byUsername = boundedFailures(options.maxEntries ?? 10_000, windowMs);
  const byPair = boundedFailures(options.maxEntries ?? 10_000, windowMs);
  const pairKey = (username: string, address: string) => `${usernameKey(username)}\u0000${address}`;

  function check(username: string, address: string) {
    const now = Date.now();
    const pair = byPair.get(pairKey(username, address), now);
    if (pair && pair.lockedUntil > now) throw tooManyRequests(pair.lockedUntil - now);
    // The checks still running may all fail and lock the address: asked again in a second, it is told.
    if (pair && pair.count + pair.running >= maxFailures) throw tooManyRequests(1000);
  }

  return {
    check,
    begin(username, address) {
      check(username, address);
      byPair.touch(pairKey(username, address), Date.now()).running += 1;
    },
    abandoned(username, address) {
      const pair = byPair.touch(pairKey(username, address), Date.now());
      pair.running = Math.max(0, pair.running - 1);
    },
    async failed(username, address) {
      const now = Date.now();
      const pair = byPair.touch(pairKey(username, address), now);
      pair.running = Math.max(0, pair.running - 1);
      pair.count += 1;
      if (pair.count >= maxFailures) Object.assign(pair, { count: 0, since: now, lockedUntil: now + lockMs });
      const failures = byUsername.touch(usernameKey(username), now);
      failures.count += 1;
      const slowed = failures.count - freeFailures;
      if (slowed > 0) await sleep(Math.min(maxDelayMs, firstDelayMs * 2 ** Math.min(slowed - 1, 20)));
    },
    succeeded(username, address) {
      byUsername.delete(usernameKey(username));
      byPair.delete(pairKey(username, address));
    },
  };
}

/** The 429 of a sign-in refused before its password is checked, asked to wait `ms`. */
export function tooManyRequests(ms: number, message?: string): TooManyRequestsError {
  // basic-auth keeps a status it finds on the error instead of making it a 401.
  return Object.assign(new TooManyRequestsError(Math.ceil(ms / 1000), message), { statusCode: 429 });
}
