import { fairTurns } from '../core/concurrency.js';
import { tooManyRequests } from '../sign-in-locks/sign-in-throttle.js';

export interface HashingQueueOptions {
  /** Password checks hashing at once over all clients: the rest of libuv's thread pool stays free for the others. */
  concurrency?: number;
  /** Checks of one client address hashing or waiting; beyond them that address is answered 429 at once. */
  perAddress?: number;
  /** Checks waiting over all clients; beyond them 429 at once, so the queue's memory stays bounded. */
  maxWaiting?: number;
  /** Client addresses whose recent failed checks are remembered; those that failed longest ago are forgotten first. */
  maxRemembered?: number;
}

/** How long a failed check weighs on its address's place in the queue: its weight falls by e every 10 seconds. */
const FAILURE_MEMORY_MS = 10_000;

export interface HashingQueue {
  /**
   * Runs `task` (a password check, resolving to what the credentials found, undefined when they are wrong) in its
   * turn, or throws the 429 at once when this address has too many. `admitted` runs once the check is let in, before
   * it waits its turn; what it throws refuses the check, which is then not queued.
   */
  run<T>(address: string, task: () => Promise<T | undefined>, admitted?: () => void): Promise<T | undefined>;
}

/**
 * The turns of the password checks (scrypt: tens of milliseconds of a thread-pool thread each). Each turn goes to
 * the waiting client address that asks least and failed least lately (fairTurns, weighed by recent failures), so
 * addresses whose checks fail (a flood of unknown usernames or wrong passwords) wait for one another, while a provider
 * signing in with its right password gets the next free slot. Weighing turns rather than failures did not do that: a flood's addresses, each
 * asking once at a time, weighed as much as a provider's and it waited its turn among them (measured with
 * `npm run abuse`). Attackers with ever new addresses are not told apart from a provider: they share the turns.
 */
export function hashingQueue(options: HashingQueueOptions = {}): HashingQueue {
  const concurrency = options.concurrency ?? 1;
  const perAddress = options.perAddress ?? 4;
  const maxWaiting = options.maxWaiting ?? 1000;
  const maxRemembered = options.maxRemembered ?? 10_000;
  // The recent failures of each address that failed lately, in the order of their last failures.
  const failures = new Map<string, { count: number; at: number }>();

  function recentFailures(address: string, now: number): number {
    const failed = failures.get(address);
    return failed ? failed.count * Math.exp((failed.at - now) / FAILURE_MEMORY_MS) : 0;
  }

  function failedOnce(address: string) {
    const now = Date.now();
    const count = recentFailures(address, now) + 1;
    failures.delete(address);
    failures.set(address, { count, at: now });
    if (failures.size > maxRemembered) failures.delete(failures.keys().next().value as string);
  }

  // A provider's sign-in asks for one check and does not fail; a flood asks again and again, and fails.
  const turns = fairTurns(concurrency, recentFailures);

  return {
    async run(address, task, admitted) {
      if (turns.heldBy(address) >= perAddress || turns.waiting >= maxWaiting) {
        throw tooManyRequests(
          1000,
          'Too many password checks from this address at once; try again later',
          'password_checks_refused',
        );
      }
      admitted?.();
      // The failure counts before the next turn is given.
      return turns.run(address, async () => {
        const found = await task();
        if (found === undefined) failedOnce(address);
        return found;
      });
    },
  };
}
