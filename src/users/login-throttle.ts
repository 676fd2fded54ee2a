import { setTimeout as sleep } from 'node:timers/promises';
import { TooManyRequestsError } from '../core/errors.js';

export interface LoginThrottleOptions {
  /** Failures of one username (from anywhere) answered at once; later ones are answered more and more slowly. */
  freeFailures?: number;
  /** The delay of the first slowed failure; it doubles with each further failure, up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Failures of one username from one client address after which that address is refused with 429. */
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
  /** Records a failed check and resolves after the delay this failure earns. */
  failed(username: string, address: string): Promise<void>;
  /** A correct password ends the slowing down and the refusal of this username. */
  succeeded(username: string, address: string): void;
}

interface Failures {
  count: number;
  since: number;
  lockedUntil: number;
}

/** A Map that drops its oldest entries beyond `max` and treats entries past the window as gone. */
function boundedFailures(max: number, windowMs: number) {
  const entries = new Map<string, Failures>();
  return {
    get(key: string, now: number): Failures | undefined {
      const entry = entries.get(key);
      if (entry && entry.since + windowMs < now && entry.lockedUntil < now) {
        entries.delete(key);
        return undefined;
      }
      return entry;
    },
    add(key: string, now: number): Failures {
      const entry = this.get(key, now) ?? { count: 0, since: now, lockedUntil: 0 };
      entry.count += 1;
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
 * too; the refusal is per username and client address, so a guesser cannot lock the owner's clients elsewhere
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
  const userKey = (username: string) => username.toLowerCase();
  const pairKey = (username: string, address: string) => `${userKey(username)}\u0000${address}`;

  return {
    check(username, address) {
      const now = Date.now();
      const pair = byPair.get(pairKey(username, address), now);
      if (pair && pair.lockedUntil > now) {
        // basic-auth keeps a status it finds on the error instead of making it a 401.
        throw Object.assign(new TooManyRequestsError(Math.ceil((pair.lockedUntil - now) / 1000)), { statusCode: 429 });
      }
    },
    async failed(username, address) {
      const now = Date.now();
      const pair = byPair.add(pairKey(username, address), now);
      if (pair.count >= maxFailures) Object.assign(pair, { count: 0, since: now, lockedUntil: now + lockMs });
      const slowed = byUsername.add(userKey(username), now).count - freeFailures;
      if (slowed > 0) await sleep(Math.min(maxDelayMs, firstDelayMs * 2 ** Math.min(slowed - 1, 20)));
    },
    succeeded(username, address) {
      byUsername.delete(userKey(username));
      byPair.delete(pairKey(username, address));
    },
  };
}
