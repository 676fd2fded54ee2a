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
