import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { EMBEDDED_DURABILITY } from '../../src/db/embedded.js';
import { testDatabaseKind } from '../helpers/database.js';
import { cleanUpAfterAll } from './harness/clean-up.js';
import { Ledger, runWriteLoad, verify } from './harness/write-load.js';
import { freshStorage, provision, startService, type RunningService, type Storage } from './harness/service.js';

const ROUNDS = Number(process.env.RELIABILITY_CRASH_ROUNDS ?? 5);
const WORKERS = 8;

let storage: Storage | undefined;
let service: RunningService | undefined;
cleanUpAfterAll(() => ({ service, storage }));

describe(`crash durability on ${testDatabaseKind === 'embedded' ? 'the embedded database' : 'PostgreSQL'}`, () => {
  it('keeps every write answered 2xx and none that was refused, through SIGKILLs at random moments', async () => {
    storage = await freshStorage(testDatabaseKind);
    service = await startService(storage.env);
    const warned = service.output.some((line) => line.includes(EMBEDDED_DURABILITY));
    expect(warned, 'the embedded database says at start-up what it cannot promise').toBe(
      testDatabaseKind === 'embedded',
    );
    const actors = await provision(service.url);
    const ledger = new Ledger();
    for (let round = 1; round <= ROUNDS; round += 1) {
      let stopped = false;
      const load = runWriteLoad(service.url, actors, ledger, WORKERS, () => stopped);
      // Killed at a random moment once this round's writes are under way (a loaded machine takes seconds to the first).
      const acknowledgedBefore = ledger.acknowledged;
      await vi.waitFor(
        () => expect(ledger.acknowledged, `round ${round}: no write answered`).toBeGreaterThan(acknowledgedBefore),
        { timeout: 60_000, interval: 20 },
      );
      await sleep(Math.random() * 3000);
      service.child.kill('SIGKILL');
      expect((await service.exited).signal).toBe('SIGKILL');
      stopped = true;
      await load;

      service = await startService(storage.env);
      expect(await verify(service.url, actors, ledger), `round ${round}`).toEqual([]);
      expect(ledger.serverErrors).toEqual([]);
    }
    console.log(
      `crash durability (${testDatabaseKind}): ${ROUNDS} SIGKILL rounds, ${ledger.acknowledged} writes answered 2xx, ` +
        `${ledger.refused} refused, ${ledger.unanswered} cut off by the kill, ${ledger.entities.length} entities and ` +
        `${ledger.refusedMarkers.length} refused writes checked after each restart`,
    );
  }, 600_000);
});
