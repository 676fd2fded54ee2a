import { describe, expect, it } from 'vitest';
import { coalesced } from '../../src/core/concurrency.js';

describe('coalesced runs (the change log numbering after commit, the change signal, the outbox)', () => {
  it('answers a call made during a run only after a run that started after it, which the calls meanwhile share', async () => {
    const starts: number[] = [];
    const ends: Array<() => void> = [];
    const runs = coalesced(async () => {
      starts.push(starts.length + 1);
      await new Promise<void>((resolve) => ends.push(resolve));
    });
    const done: string[] = [];
    const first = runs.run().then(() => done.push('first'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(starts).toEqual([1]);
    // Two writers commit while the first run goes: what it read may predate them, so they wait for the next.
    const second = runs.run().then(() => done.push('second'));
    const third = runs.run().then(() => done.push('third'));

    ends[0]?.();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toEqual(['first']);
    expect(starts).toEqual([1, 2]);

    ends[1]?.();
    await Promise.all([second, third]);
    expect(done).toEqual(['first', 'second', 'third']);
    expect(starts).toEqual([1, 2]);
  });

  it('starts a run at once when none is going, and goes on after a run that failed', async () => {
    let calls = 0;
    const runs = coalesced(async () => {
      calls += 1;
      if (calls === 1) throw new Error('the database was away');
    });
    await expect(runs.run()).rejects.toThrow('the database was away');
    await runs.run();
    expect(calls).toBe(2);
  });
});
