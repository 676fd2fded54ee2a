import type { Queryable } from '../db/database.js';
import { PARTICIPANT_SCHEME } from '../participants/identifiers.js';
import { participantIsLive } from '../participants/repository.js';
import type { SmlClient } from './sml-client.js';

export interface Reconciliation {
  /** Organizations with a live participant: what the SML should hold. */
  expected: number;
  /** What the SML holds for this SMP (its List operation). */
  held: number;
  missing: string[];
  extra: string[];
  repaired: boolean;
}

/**
 * Compares what the SML should hold with what it holds and, unless `dryRun`, registers what is missing and
 * deletes what is extra; `sml_registrations` is set to what the SML then holds.
 */
export async function reconcileSml(db: Queryable, sml: SmlClient, options: { dryRun?: boolean } = {}): Promise<Reconciliation> {
  const rows = await db.query<{ participant: string }>(
    `SELECT DISTINCT '${PARTICIPANT_SCHEME}::' || pa.icd || ':' || pa.organization_identifier AS participant
       FROM participants pa WHERE ${participantIsLive('pa')}`,
  );
  const expected = new Set(rows.map((row) => row.participant));
  const held = new Set((await sml.list()).map((participant) => participant.toLowerCase()));
  const missing = [...expected].filter((participant) => !held.has(participant)).sort();
  const extra = [...held].filter((participant) => !expected.has(participant)).sort();
  if (!options.dryRun) {
    for (const participant of missing) await sml.create(participant);
    for (const participant of extra) await sml.delete(participant);
    await db.query('DELETE FROM sml_registrations');
    await db.query('INSERT INTO sml_registrations (participant) SELECT unnest($1::text[])', [[...expected]]);
  }
  return { expected: expected.size, held: held.size, missing, extra, repaired: !options.dryRun };
}
