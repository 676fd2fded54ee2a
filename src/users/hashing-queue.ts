import { tooManyRequests } from './login-throttle.js';

export interface HashingQueueOptions {
  /** Password checks hashing at once over all clients: the rest of libuv's thread pool stays free for the others. */
  concurrency?: number;
  /** Checks of one client address hashing or waiting; beyond them that address is answered 429 at once. */
  perAddress?: number;
  /** Checks waiting over all clients; beyond them 429 at once, so the queue's memory stays bounded. */
  maxWaiting?: number;
  /** Client addresses whose recent turns are remembered; those served longest ago are forgotten first. */
  maxRemembered?: number;
}

/** How long a turn weighs on its address's place in the queue: its weight falls by e every 10 seconds. */
const USAGE_MEMORY_MS = 10_000;

export interface HashingQueue {
  /** Runs `task` (a password check) in its turn, or throws the 429 at once when this address has too many. */
  run<T>(address: string, task: () => Promise<T>): Promise<T>;
}

interface Client {
  running: number;
  waiting: (() => void)[];
}

/**
 * The turns of the password checks (scrypt: tens of milliseconds of a thread-pool thread each). Each turn goes to
 * the waiting client address that asks least (see next()), so addresses that keep the queue full (a flood of
 * unknown usernames) wait for one another, while an address that signs in now and then, a provider's, gets the
 * next free slot. Attackers with ever new addresses are not told apart from a provider: they share the turns.
 */
export function hashingQueue(options: HashingQueueOptions = {}): HashingQueue {
  const concurrency = options.concurrency ?? 1;
  const perAddress = options.perAddress ?? 4;
  const maxWaiting = options.maxWaiting ?? 1000;
  const maxRemembered = options.maxRemembered ?? 10_000;
  // Addresses with checks running or waiting, in the order they came; the recent turns of each address served lately,
  // in the order of their last turns.
  const clients = new Map<string, Client>();
  const usage = new Map<string, { turns: number; at: number }>();
  let running = 0;
  let waiting = 0;

  function recentTurns(address: string, now: number): number {
    const used = usage.get(address);
    return used ? used.turns * Math.exp((used.at - now) / USAGE_MEMORY_MS) : 0;
  }

  function tookTurn(address: string) {
    const now = Date.now();
    const turns = recentTurns(address, now) + 1;
    usage.delete(address);
    usage.set(address, { turns, at: now });
    if (usage.size > maxRemembered) usage.delete(usage.keys().next().value as string);
  }

  /**
   * The waiting address that asks least: the fewest checks running, waiting and had lately; of equals, the first
   * to come. A sign-in now and then asks for one, a flood for several at a time and again and again.
   */
  function next(): [string, Client] | undefined {
    const now = Date.now();
    let chosen: [string, Client] | undefined;
    let least = Number.POSITIVE_INFINITY;
    for (const entry of clients) {
      const [address, client] = entry;
      if (client.waiting.length === 0) continue;
      const asked = client.running + client.waiting.length + recentTurns(address, now);
      if (asked < least) [chosen, least] = [entry, asked];
    }
    return chosen;
  }

  function dispatch() {
    while (running < concurrency) {
      const entry = next();
      if (!entry) return;
      const [address, client] = entry;
      waiting -= 1;
      running += 1;
      client.running += 1;
      tookTurn(address);
      (client.waiting.shift() as () => void)();
    }
  }

  function finished(address: string, client: Client) {
    running -= 1;
    client.running -= 1;
    if (client.running === 0 && client.waiting.length === 0) clients.delete(address);
    dispatch();
  }

  return {
    async run(address, task) {
      const client = clients.get(address) ?? { running: 0, waiting: [] };
      if (client.running + client.waiting.length >= perAddress || waiting >= maxWaiting) {
        throw tooManyRequests(1000, 'Too many password checks from this address at once; try again later');
      }
      clients.set(address, client);
      const turn = new Promise<void>((resolve) => client.waiting.push(resolve));
      waiting += 1;
      dispatch();
      await turn;
      try {
        return await task();
      } finally {
        finished(address, client);
      }
    },
  };
}
