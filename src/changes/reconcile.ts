import type { Database } from '../db/database.js';
import { CLI_ACTOR } from '../db/change-log.js';
import { finishMigrationsOut } from './migration-out.js';
import { PARTICIPANT_SCHEME } from '../participants/identifiers.js';
import { participantIsLive } from '../participants/repository.js';
import { registerInSml } from './targets.js';
import { participantsMigratingOut, recordRegistered, smlRecordOf } from './network.js';
import type { SmlClient } from './sml-client.js';

export interface Reconciliation {
  /** Organizations with a live participant: what the SML should hold. */
  expected: number;
  /** What the SML holds for this SMP (its List operation). */
  held: number;
  missing: string[];
  extra: string[];
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
export async function reconcileSml(db: Database, sml: SmlClient, options: { dryRun?: boolean } = {}): Promise<Reconciliation> {
  const held = new Set((await sml.list()).map((participant) => participant.toLowerCase()));
  const migrated = options.dryRun
    ? (await participantsMigratingOut(db)).filter((participant) => !held.has(participant))
    : await finishMigrationsOut(db, held, CLI_ACTOR);
  const rows = await db.query<{ participant: string }>(
    `SELECT DISTINCT '${PARTICIPANT_SCHEME}::' || pa.icd || ':' || pa.organization_identifier AS participant
       FROM participants pa WHERE ${participantIsLive('pa')}`,
  );
  const expected = new Set(rows.map((row) => row.participant));
  const missing = [...expected].filter((participant) => !held.has(participant)).sort();
  const extra = [...held].filter((participant) => !expected.has(participant)).sort();
  if (!options.dryRun) {
    await recordRegistered(db, [...expected].filter((participant) => held.has(participant)));
    for (const participant of missing) await registerInSml(db, sml, participant, (await smlRecordOf(db, participant)).migrationKey);
    for (const participant of extra) await sml.delete(participant);
  }
  return { expected: expected.size, held: held.size, missing, extra, migrated, repaired: !options.dryRun };
}
