import { utcInstant } from '../db/sql.js';
import { appendChange, SYSTEM_ACTOR } from '../db/change-log.js';
import type { Database } from '../db/database.js';
import {
  PARTICIPANT_RECORD_COLUMNS,
  participantIsLive,
  participantOfRecord,
  type ParticipantRecord,
} from '../participants/repository.js';
import { processesFromDatabase } from '../processes/repository.js';
import type { ChangeSignal } from '../db/change-signal.js';

/** How far back a removal instant not yet announced is still announced (one passed while the service was down). */
const CATCH_UP = "interval '7 days'";
/** The longest delay a Node timer takes; a later instant is armed again from there. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** After a failed announcement, the next try. */
const RETRY_MS = 60_000;

/** The live participants that lose a process, or a document type of one of their processes, at instant $1 exactly. */
const LOSING_AT = `
  SELECT ${PARTICIPANT_RECORD_COLUMNS} FROM participants pa
   WHERE ${participantIsLive('pa')} AND EXISTS (
     SELECT 1 FROM participant_processes pp JOIN processes p ON p.id = pp.process_id
      WHERE pp.participant_id = pa.id AND (p.removed_from = $1 OR EXISTS (
        SELECT 1 FROM process_document_types pdt JOIN document_types d ON d.id = pdt.document_type_id
         WHERE pdt.process_id = p.id AND d.removed_from = $1)))
   ORDER BY pa.id`;

/**
 * Logs, once whichever instance comes first (`catalogue_removals_announced`), a 'withdraw' of each participant that
 * loses something at `instant`, the participant as it is before and after (its record keeps what was removed): the SML
 * and Directory deliveries look at its organization again, the caches drop its answers, its provider's feed shows it.
 * Returns how many were logged (0: announced already).
 */
export async function announceRemoval(db: Database, instant: string): Promise<number> {
  return db.transaction(async (tx) => {
    const [fresh] = await tx.query(
      'INSERT INTO catalogue_removals_announced (removed_from) VALUES ($1) ON CONFLICT DO NOTHING RETURNING 1',
      [instant],
    );
    if (!fresh) return 0;
    const source = processesFromDatabase(tx);
    const changes = [];
    for (const record of await tx.query<ParticipantRecord>(LOSING_AT, [instant])) {
      const participant = await participantOfRecord(record, source);
      changes.push({
        resource: 'participant' as const,
        identifier: participant.qualifiedIdentifier,
        operation: 'withdraw' as const,
        before: participant,
        after: participant,
      });
    }
    await appendChange(tx, SYSTEM_ACTOR, changes);
    return changes.length;
  });
}

/** The first removal instant not yet announced, from a week ago on; undefined when none is set. */
async function nextRemoval(db: Database): Promise<string | undefined> {
  const [row] = await db.query<{ instant: string | null }>(
    `SELECT ${utcInstant('min(r.removed_from)')} AS instant
       FROM (SELECT removed_from FROM processes UNION SELECT removed_from FROM document_types) r
      WHERE r.removed_from > now() - ${CATCH_UP}
        AND NOT EXISTS (SELECT 1 FROM catalogue_removals_announced a WHERE a.removed_from = r.removed_from)`,
  );
  return row?.instant ?? undefined;
}

export interface RemovalAnnouncer {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A timer at the next removal instant, armed at the start and again at every catalogue change (a load, an authority's
 * edit): at the instant, `announceRemoval`. What the SMP publishes needs no timer (it compares each instant with the
 * clock, smp/publisher.ts); the SML and the Directory follow the change log, which needs this entry.
 */
export function removalAnnouncer(
  db: Database,
  changes: ChangeSignal,
  onError: (error: unknown) => void,
): RemovalAnnouncer {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let unsubscribe: (() => void) | undefined;
  let work: Promise<unknown> = Promise.resolve();
  const later = (step: () => Promise<void>, ms: number) => {
    clearTimeout(timer);
    if (!running) return;
    timer = setTimeout(() => void queue(step), Math.min(Math.max(0, ms), MAX_TIMER_MS));
    timer.unref();
  };
  const queue = (step: () => Promise<void>) =>
    (work = work.then(step).catch((error: unknown) => {
      onError(error);
      later(arm, RETRY_MS);
    }));
  const arm = async (): Promise<void> => {
    const instant = running ? await nextRemoval(db) : undefined;
    if (instant !== undefined) later(() => fire(instant), Date.parse(instant) - Date.now());
  };
  const fire = async (instant: string): Promise<void> => {
    if (Date.parse(instant) <= Date.now()) await announceRemoval(db, instant);
    await arm();
  };
  return {
    async start() {
      running = true;
      unsubscribe = changes.subscribe((notice) => {
        if (notice.resource === 'process' || notice.resource === 'document-type') void queue(arm);
      });
      await queue(arm);
    },
    async stop() {
      running = false;
      unsubscribe?.();
      clearTimeout(timer);
      await work;
    },
  };
}
