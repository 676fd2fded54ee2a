import { NOT_HELD, type NotHeld } from '../core/held.js';
import { batchableRead } from '../db/batched-reads.js';
import type { Queryable } from '../db/database.js';
import type { HeldParticipants } from '../participants/held-participants.js';
import { qualifiedIdentifierOf, type Organization } from '../participants/identifiers.js';
import { participantIsLive } from '../participants/repository.js';
import type { ProcessSource } from '../processes/repository.js';
import { processPublishedAt } from '../processes/publication.js';
import type { Process } from '../processes/schemas.js';
import type { OrganizationSummary } from './schemas.js';

const ORGANIZATION_PROCESSES = batchableRead(
  `SELECT EXISTS (SELECT 1 FROM participants pa
                   WHERE pa.icd = $1 AND pa.organization_identifier = $2 AND ${participantIsLive('pa')}) AS registered,
          (SELECT coalesce(json_agg(json_build_object('id', held.process_id, 'since', to_char(held.since AT TIME ZONE 'UTC', 'YYYY-MM-DD'))), '[]'::json)
             FROM (SELECT pp.process_id, min(pp.added_at) AS since FROM participant_processes pp
                     JOIN participants pa ON pa.id = pp.participant_id
                    WHERE pp.icd = $1 AND pp.organization_identifier = $2 AND ${participantIsLive('pa')}
                    GROUP BY pp.process_id) held) AS held`,
  ['text', 'text'],
);

/** A process of an organization (the catalogue's own object) and the day since which it has had it: an `OrganizationProcess`. */
export interface ReceivableProcess {
  process: Process;
  receivableSince: string;
}

/**
 * The published processes of all live participants of an organization, each once, in qualified identifier order, each with
 * the day since which one of them has had it; undefined when the organization has no live participant. The
 * participants' snapshot once they have read what changed (`caughtUp`) gives the process ids and days (the database
 * until they are loaded), `processes` (the catalogue cache: the processes held, else loaded) the processes.
 */
export async function organizationProcesses(
  db: Queryable,
  processes: ProcessSource,
  participants: Pick<HeldParticipants, 'caughtUp'>,
  organization: Organization,
): Promise<ReceivableProcess[] | undefined> {
  const since = await processesSince(db, participants, organization);
  return since && receivable(since, await processes.processesIn([...since.keys()]));
}

/** The catalogue's processes as held now (the catalogue cache's `processesHeld`), in qualified identifier order. */
export interface HeldProcesses {
  processesHeld(ids: readonly string[]): Process[] | NotHeld;
}

/**
 * The organization's processes as `organizationProcesses` finds them, from memory alone, for an early answer: the
 * participants' snapshot (`HeldParticipants.held`) and the processes the catalogue holds, the snapshots the route reads
 * when they are there. `NOT_HELD` when either is not, or the organization has no live participant: the route answers.
 */
export function organizationProcessesHeld(
  participants: Pick<HeldParticipants, 'held'>,
  processes: HeldProcesses,
  organization: Organization,
): ReceivableProcess[] | NotHeld {
  const held = participants.held();
  const since = held === NOT_HELD ? undefined : held.processesSinceOf(organization);
  const found = since ? processes.processesHeld([...since.keys()]) : NOT_HELD;
  return since && found !== NOT_HELD ? receivable(since, found) : NOT_HELD;
}

/**
 * `processes` (those of `since`, in their order) as published at `now` (publication.ts: a removed one left out, a
 * removed document type left out of its process), each with its day from `since`.
 */
export function receivable(
  since: ReadonlyMap<string, string>,
  processes: readonly Process[],
  now = Date.now(),
): ReceivableProcess[] {
  return processes.flatMap((held) => {
    const receivableSince = since.get(held.identifier);
    const process = processPublishedAt(held, now);
    return receivableSince === undefined || !process ? [] : [{ process, receivableSince }];
  });
}

/** Each process of the organization's live participants with the day since when (YYYY-MM-DD); undefined without one. */
async function processesSince(
  db: Queryable,
  participants: Pick<HeldParticipants, 'caughtUp'>,
  organization: Organization,
): Promise<ReadonlyMap<string, string> | undefined> {
  const held = await participants.caughtUp();
  if (held !== NOT_HELD) return held.processesSinceOf(organization);
  const row = await db.readOne<{ registered: boolean; held: { id: string; since: string }[] }>(ORGANIZATION_PROCESSES, [
    organization.icd,
    organization.organizationIdentifier,
  ]);
  return row?.registered ? new Map(row.held.map(({ id, since }) => [id, since])) : undefined;
}

const ORGANIZATION_SUMMARY = batchableRead(
  `SELECT (array_agg(pa.name ORDER BY pa.registration_date, pa.id))[1] AS name,
          array_agg(DISTINCT sp.title ORDER BY sp.title) AS providers
     FROM participants pa JOIN service_providers sp ON sp.id = pa.service_provider_id
    WHERE pa.icd = $1 AND pa.organization_identifier = $2 AND ${participantIsLive('pa')}
   HAVING count(*) > 0`,
  ['text', 'text'],
);

/**
 * The organization's name (as its business card: its first registered live participant's) and the titles of the
 * service providers of its live participants; undefined when it has none. One organization has a participant per
 * provider at most, so the list is as short as the providers that serve it.
 */
export async function organizationSummary(
  db: Queryable,
  organization: Organization,
): Promise<OrganizationSummary | undefined> {
  const row = await db.readOne<{ name: string | null; providers: string[] }>(ORGANIZATION_SUMMARY, [
    organization.icd,
    organization.organizationIdentifier,
  ]);
  if (!row) return undefined;
  return {
    qualifiedIdentifier: qualifiedIdentifierOf(organization),
    name: row.name,
    providers: row.providers.map((title) => ({ title })),
  };
}
