import type { Database } from '../db/database.js';
import { CLI_ACTOR } from '../db/change-log.js';
import { finishMigrationsOut } from './migration-out.js';
import { PARTICIPANT_SCHEME } from '../participants/identifiers.js';
import { participantIsLive, participantPublishes } from '../participants/repository.js';
import { registerInSml } from './targets.js';
import { participantsMigratingOut, recordRegistered, smlRecordOf } from './network.js';
import { SmlError, type SmlClient } from './sml-client.js';

/** An organization the SML lacks or holds too many, and (repairing) what the SML answered to the repair. */
export interface Difference {
  participant: string;
  /** `registered`, `held_elsewhere`, `refused` (a missing one); `deleted` (an extra one); `failed` (no answer, try again). */
  outcome?: 'registered' | 'held_elsewhere' | 'refused' | 'deleted' | 'failed';
  /** The SML's refusal or failure. */
  message?: string;
}

export interface Reconciliation {
  /** Organizations with a live participant: what the SML should hold. */
  expected: number;
  /** What the SML holds for this SMP (its List operation). */
  held: number;
  missing: Difference[];
  extra: Difference[];
  /** Organizations migrating out that another SMP has now migrated: their participants ended. */
  migrated: string[];
  repaired: boolean;
}

/**
 * Ends the organizations another SMP has migrated (migrating out, and no longer in the SML's List for this SMP),
 * then compares what the SML should hold with what it holds and, unless `dryRun`, registers what is missing (as the
 * delivery does: a refusal, such as an organization another SMP holds, is recorded for that participant) and
 * deletes what is extra; `sml_participants` then says what the SML holds for this SMP.
 */
export async function reconcileSml(
  db: Database,
  sml: SmlClient,
  options: { dryRun?: boolean } = {},
): Promise<Reconciliation> {
  const held = new Set((await sml.list()).map((participant) => participant.toLowerCase()));
  const migrated = options.dryRun
    ? (await participantsMigratingOut(db)).filter((participant) => !held.has(participant))
    : await finishMigrationsOut(db, held, CLI_ACTOR);
  const rows = await db.query<{ participant: string }>(
    `SELECT DISTINCT '${PARTICIPANT_SCHEME}::' || pa.icd || ':' || pa.organization_identifier AS participant
       FROM participants pa WHERE ${participantIsLive('pa')} AND ${participantPublishes('pa')}`,
  );
  const expected = new Set(rows.map((row) => row.participant));
  const missing = [...expected].filter((participant) => !held.has(participant)).sort();
  const extra = [...held].filter((participant) => !expected.has(participant)).sort();
  if (options.dryRun) {
    const listed = (participant: string) => ({ participant });
    return {
      expected: expected.size,
      held: held.size,
      missing: missing.map(listed),
      extra: extra.map(listed),
      migrated,
      repaired: false,
    };
  }
  await recordRegistered(
    db,
    [...expected].filter((participant) => held.has(participant)),
  );
  const registered: Difference[] = [];
  for (const participant of missing)
    registered.push(await repairedBy(participant, () => registerMissing(db, sml, participant)));
  const deleted: Difference[] = [];
  for (const participant of extra)
    deleted.push(await repairedBy(participant, async () => ({ outcome: (await sml.delete(participant), 'deleted') })));
  return { expected: expected.size, held: held.size, missing: registered, extra: deleted, migrated, repaired: true };
}

/** Registers a missing organization as the delivery does; what the SML answered, as recorded. */
async function registerMissing(
  db: Database,
  sml: SmlClient,
  participant: string,
): Promise<Omit<Difference, 'participant'>> {
  await registerInSml(db, sml, participant, (await smlRecordOf(db, participant)).migrationKey);
  const [row] = await db.query<{ state: 'registered' | 'held_elsewhere' | 'refused'; message: string | null }>(
    'SELECT state, error_message AS message FROM sml_participants WHERE participant = $1',
    [participant],
  );
  return { outcome: row?.state ?? 'failed', ...(row?.message ? { message: row.message } : {}) };
}

/** One repair; an SML that fails (or refuses a Delete) is reported for that organization, and the others go on. */
async function repairedBy(
  participant: string,
  repair: () => Promise<Omit<Difference, 'participant'>>,
): Promise<Difference> {
  try {
    return { participant, ...(await repair()) };
  } catch (error) {
    if (!(error instanceof SmlError)) throw error;
    return { participant, outcome: error.final ? 'refused' : 'failed', message: error.message };
  }
}
