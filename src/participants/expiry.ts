import type { Database } from '../db/database.js';
import { expireParticipants } from './writes.js';

/** Participants expired per transaction: a large day's expiries never hold locks in one long transaction. */
const BATCH = 500;
/** After midnight by this much, so the database's clock agrees that the day has turned. */
const PAST_MIDNIGHT_MS = 1000;

const utcToday = (now = new Date()) => now.toISOString().slice(0, 10);

/**
 * Expires every participant whose delete date is `today` or earlier (default: today in UTC), logging each once:
 * the deliveries then delete it from the SML and the Directory as for a delete. Safe to run on several instances
 * at once (see removeExpired). Returns how many this call expired.
 */
export async function sweepExpiredParticipants(db: Database, today = utcToday()): Promise<number> {
  let total = 0;
  for (;;) {
    const expired = await db.transaction((tx) => expireParticipants(tx, { today, limit: BATCH }));
    if (expired === 0) return total;
    total += expired;
  }
}

function msUntilNextUtcMidnight(now = new Date()): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime();
}

export interface ExpirySweeper {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Sweeps at start (expiries missed while the service was down) and at every UTC midnight after. */
export function expirySweeper(db: Database, onError: (error: unknown) => void): ExpirySweeper {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweepThenWait = () => {
    sweeping = sweepExpiredParticipants(db)
      .catch(onError)
      .finally(() => {
        if (!running) return;
        timer = setTimeout(sweepThenWait, msUntilNextUtcMidnight() + PAST_MIDNIGHT_MS);
        timer.unref();
      });
  };
  return {
    async start() {
      running = true;
      sweepThenWait();
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      await sweeping;
    },
  };
}
