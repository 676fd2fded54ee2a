/** Counts what each key (a client address, a user) holds at once, up to a maximum per key. */
export class Slots {
  private readonly held = new Map<string, number>();

  constructor(readonly maxPerKey: number) {}

  /** Takes one of `key`'s slots; false when it holds them all. */
  take(key: string): boolean {
    const count = this.held.get(key) ?? 0;
    if (count >= this.maxPerKey) return false;
    this.held.set(key, count + 1);
    return true;
  }

  release(key: string): void {
    const left = (this.held.get(key) ?? 1) - 1;
    if (left > 0) this.held.set(key, left);
    else this.held.delete(key);
  }
}

/**
 * Runs of work that the calls with the same key share while one runs: a call then gets that run's result instead of
 * starting its own. A call after the run has ended starts a new one.
 */
export function sharedRuns<T>(): (key: string, work: () => Promise<T>) => Promise<T> {
  const running = new Map<string, Promise<T>>();
  return (key, work) => {
    const existing = running.get(key);
    if (existing) return existing;
    const run = work().finally(() => running.delete(key));
    running.set(key, run);
    return run;
  };
}

/**
 * Runs `work` one call at a time; a call while one runs asks for one more run after it, never more (calls
 * meanwhile share that run). Resolves when a run that started after the call has finished.
 */
export function coalesced(work: () => Promise<void>, onError: (error: unknown) => void = () => undefined) {
  let queued: Promise<void> | undefined;
  let tail: Promise<void> = Promise.resolve();
  return {
    run(): Promise<void> {
      if (queued) return queued;
      const next = tail.then(() => {
        queued = undefined;
        return work();
      });
      queued = next;
      tail = next.catch(onError);
      return next;
    },
    /** Resolves when the runs asked for so far have ended. */
    settled: () => tail,
  };
}

export interface FairTurns {
  /** Runs `task` in `client`'s turn, once a slot is free and no waiting client holds less. */
  run<T>(client: string, task: () => Promise<T>): Promise<T>;
  /** The tasks of `client` running or waiting. */
  heldBy(client: string): number;
  /** The tasks waiting, over all clients. */
  readonly waiting: number;
}

interface TurnsOfClient {
  running: number;
  waiting: (() => void)[];
}

/**
 * Turns at work that runs `concurrency` tasks at once (password checks, signatures), shared among clients (their
 * addresses): each free slot goes to the waiting client that holds least (its tasks running and waiting, plus
 * `extraWeight` of it), of equals the first to come. A client that sends many at once waits for its own tasks, and the
 * others do not wait behind them.
 */
export function fairTurns(
  concurrency: number,
  extraWeight: (client: string, now: number) => number = () => 0,
): FairTurns {
  // Clients with tasks running or waiting, in the order they came.
  const clients = new Map<string, TurnsOfClient>();
  let running = 0;
  let waiting = 0;

  function next(): TurnsOfClient | undefined {
    const now = Date.now();
    let chosen: TurnsOfClient | undefined;
    let least = Number.POSITIVE_INFINITY;
    for (const [client, turns] of clients) {
      if (turns.waiting.length === 0) continue;
      const held = turns.running + turns.waiting.length + extraWeight(client, now);
      if (held < least) [chosen, least] = [turns, held];
    }
    return chosen;
  }

  function dispatch() {
    while (running < concurrency) {
      const turns = next();
      if (!turns) return;
      waiting -= 1;
      running += 1;
      turns.running += 1;
      (turns.waiting.shift() as () => void)();
    }
  }

  return {
    async run(client, task) {
      const turns = clients.get(client) ?? { running: 0, waiting: [] };
      clients.set(client, turns);
      const turn = new Promise<void>((resolve) => turns.waiting.push(resolve));
      waiting += 1;
      dispatch();
      await turn;
      try {
        return await task();
      } finally {
        running -= 1;
        turns.running -= 1;
        if (turns.running === 0 && turns.waiting.length === 0) clients.delete(client);
        dispatch();
      }
    },
    heldBy: (client) => {
      const turns = clients.get(client);
      return turns ? turns.running + turns.waiting.length : 0;
    },
    get waiting() {
      return waiting;
    },
  };
}

/** Runs what it is given with at most `limit` runs at once; the others wait their turn, in the order given. */
export function inTurns(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  const next = () => {
    while (running < limit && waiting.length > 0) {
      running += 1;
      waiting.shift()?.();
    }
  };
  return (work) =>
    new Promise((resolve, reject) => {
      waiting.push(
        () =>
          void Promise.resolve()
            .then(work)
            .then(resolve, reject)
            .finally(() => {
              running -= 1;
              next();
            }),
      );
      next();
    });
}
