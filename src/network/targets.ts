import type { Queryable } from '../db/database.js';
import { parseOrganization } from '../participants/identifiers.js';
import { participantIsLive, participantPublishes } from '../participants/repository.js';
import { isSpis } from '../participants/service-provider-identifiers.js';
import { inTurns } from '../core/concurrency.js';
import { deliveredInTurns, type Delivery, type DeliveryTarget, type Outcome } from './outbox.js';
import { DirectoryError, type DirectoryClient } from './directory-client.js';
import {
  type SmlState,
  forgetMigrationKey,
  forgetPushed,
  forgetSml,
  forgetSmlAll,
  heldForThisSmp,
  recordDirectoryRefusal,
  recordPushed,
  recordSml,
  recordSmlRegistered,
  smlRecordOf,
  smlRecordsOf,
  smlStateOf,
  wasPushed,
} from './network.js';
import { SmlError, type SmlClient } from './sml-client.js';

/** The organizations one CreateList or DeleteList carries at most, by default. */
export const DEFAULT_SML_LIST_SIZE = 100;

/** Whether the organization has a live participant with something publishable (its processes not all removed). */
async function organizationIsLive(db: Queryable, participant: string): Promise<boolean> {
  const organization = parseOrganization(participant);
  if (!organization) return false;
  const [row] = await db.query(
    `SELECT 1 FROM participants pa WHERE pa.icd = $1 AND pa.organization_identifier = $2 AND ${participantIsLive('pa')}
        AND ${participantPublishes('pa')} LIMIT 1`,
    [organization.icd, organization.organizationIdentifier],
  );
  return row !== undefined;
}

/**
 * The SML: registered when the organization has its first live participant, deleted when the last one goes or has
 * nothing publishable left (every process or document type past its removal instant: removals.ts announces it).
 * Several at once go in lists of at most `listSize` (CreateList, DeleteList), each refused list again member by
 * member, so that one organization's refusal stays its own.
 */
export const smlTarget = (sml: SmlClient, listSize = DEFAULT_SML_LIST_SIZE): DeliveryTarget => ({
  name: 'sml',
  listSize,
  deliver: (db, participant, operation) => deliverToSml(db, sml, participant, operation),
  deliverMany: (db, entries, concurrency) => deliverManyToSml(db, sml, entries, concurrency, listSize),
});

/**
 * The Peppol Directory: every change of a participant pushed (PUT), the organization deleted with its last one.
 * With `after: 'sml'` an entry is pushed only once the SML has it, since the Directory looks a pushed
 * participant up through the SML, and only while the SML holds it for this SMP (not one another SMP holds).
 * Only what was pushed is deleted. A refusal no retry can cure (a 4xx) is recorded for the organization. A service
 * provider's own identifier (0242, its MLS address) is never pushed: the Directory lists end users, not providers.
 */
export function directoryTarget(directory: DirectoryClient, after?: string): DeliveryTarget {
  async function deliver(db: Queryable, participant: string): Promise<boolean> {
    if (isSpis(parseOrganization(participant)?.icd ?? '')) return false;
    try {
      if (await organizationIsLive(db, participant)) {
        if (after !== undefined && !heldForThisSmp(await smlStateOf(db, participant))) return false;
        await directory.put(participant);
        await recordPushed(db, participant);
        return true;
      }
      if (!(await wasPushed(db, participant))) return false;
      await directory.delete(participant);
      await forgetPushed(db, participant);
      return true;
    } catch (error) {
      if (!(error instanceof DirectoryError && error.final)) throw error;
      await recordDirectoryRefusal(db, participant, error);
      return true;
    }
  }
  return {
    name: 'directory',
    ...(after === undefined ? {} : { after }),
    deliver,
    // One organization a call, `concurrency` calls at once.
    deliverMany: (db, entries, concurrency) =>
      deliveredInTurns(entries, concurrency, (entry) => deliver(db, entry.participant)),
  };
}

/** The SML's refusal that no retry can cure; anything else (a retry can cure it) is thrown again. */
function refusalOf(error: unknown): SmlError {
  if (error instanceof SmlError && error.final) return error;
  throw error;
}

async function deliverToSml(db: Queryable, sml: SmlClient, participant: string, operation?: string): Promise<boolean> {
  const { state, migrationKey } = await smlRecordOf(db, participant);
  const live = await organizationIsLive(db, participant);
  const action = smlActionOf({ state, migrationKey, live }, operation);
  if (action === 'create' || action === 'migrate') await registerInSml(db, sml, participant, migrationKey);
  else if (action === 'delete') await deleteFromSml(db, sml, participant);
  else {
    if (action === 'forget') await forgetSml(db, participant);
    return false;
  }
  return true;
}

/**
 * Registers the organization in the SML: Migrate with `key`, the one its provider gave (taking it over from
 * another SMP), else Create. A refusal of Create with BadRequestFault, or of Migrate, is of an answer that was lost when
 * the SML's List shows the organization under this SMP's ID; else a Create of one that "already exist[s]"
 * (ERR-106) is of one another SMP holds; any other refusal no retry can cure is recorded as refused (a wrong
 * migration key among them: it is not tried again). Each refusal is recorded, and the cursor goes on.
 */
export async function registerInSml(
  db: Queryable,
  sml: SmlClient,
  participant: string,
  key?: string,
  listed: () => Promise<readonly string[]> = () => sml.list(),
): Promise<void> {
  const refusal = await (key === undefined ? sml.create(participant) : sml.migrate(participant, key)).then(
    () => undefined,
    refusalOf,
  );
  if (key !== undefined) await forgetMigrationKey(db, participant);
  if (refusal === undefined) return recordSml(db, participant, 'registered');
  if (key !== undefined || refusal.fault === 'BadRequestFault') {
    const ours = (await listed()).some((held) => held.toLowerCase() === participant);
    if (ours) return recordSml(db, participant, 'registered');
    if (key === undefined && /already exist/i.test(refusal.message))
      return recordSml(db, participant, 'held_elsewhere', refusal);
  }
  return recordSml(db, participant, 'refused', refusal);
}

/** Deletes the organization from the SML; a NotFoundFault (deleted by an earlier attempt whose answer was lost) is done. */
async function deleteFromSml(db: Queryable, sml: SmlClient, participant: string): Promise<void> {
  const refusal = await sml.delete(participant).then(() => undefined, refusalOf);
  if (refusal === undefined || refusal.fault === 'NotFoundFault') return forgetSml(db, participant);
  return recordSml(db, participant, 'refused', refusal);
}

type SmlAction = 'create' | 'migrate' | 'delete' | 'forget' | 'none';

/** What the SML must be told of an organization now, for one (`deliverToSml`) as for a window (`deliverManyToSml`). */
function smlActionOf(
  record: { state?: SmlState | undefined; migrationKey?: string | undefined; live: boolean },
  operation?: string,
): SmlAction {
  // One migrating out is served as usual, registered, until another SMP has migrated it (sml-reconcile ends it).
  const ours = heldForThisSmp(record.state);
  // The change a migration key logged, whose key an earlier delivery already used: the SML's answer to it is recorded,
  // and a Create now would be refused as held elsewhere over the key's own refusal.
  if (record.live && !ours && operation === 'migrate' && record.migrationKey === undefined) return 'none';
  if (record.live && !ours) return record.migrationKey === undefined ? 'create' : 'migrate';
  if (!record.live && ours) return 'delete';
  return !record.live && record.state !== undefined ? 'forget' : 'none';
}

const chunked = <T>(all: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(all.length / size) }, (_, at) => all.slice(at * size, (at + 1) * size));

/**
 * Several organizations at once: the state of all read in one query; the creates in CreateLists and the deletes in
 * DeleteLists of at most `listSize`, a migration alone; at most `concurrency` calls in flight. A list the SML
 * refuses (all or nothing at BDMSL) is sent again member by member, each refusal then recorded as its own; a list
 * that failed otherwise (a timeout, the SML's internal error) too, but once `concurrency` of those calls failed and
 * none answered, the peer fails for everyone and the rest are not tried (failed with the list's failure). One List
 * of this SMP's registrations at most per window tells a lost answer from an organization held elsewhere.
 */
async function deliverManyToSml(
  db: Queryable,
  sml: SmlClient,
  entries: readonly Delivery[],
  concurrency: number,
  listSize: number,
): Promise<Outcome[]> {
  const records = await smlRecordsOf(
    db,
    entries.map((entry) => entry.participant),
    `${participantIsLive('pa')} AND ${participantPublishes('pa')}`,
  );
  const turn = inTurns(concurrency);
  const outcomes = new Map<string, Outcome>();
  let listing: Promise<readonly string[]> | undefined;
  const listed = () => (listing ??= sml.list());
  const actions = entries.map((entry) => {
    const record = records.get(entry.participant) ?? { live: false };
    return { ...entry, ...record, action: smlActionOf(record, entry.operation) };
  });
  type Planned = (typeof actions)[number];
  const single = (planned: Planned) =>
    planned.action === 'delete'
      ? deleteFromSml(db, sml, planned.participant)
      : registerInSml(db, sml, planned.participant, planned.migrationKey, listed);
  const one = async (planned: Planned): Promise<Outcome> =>
    turn(() => single(planned)).then(
      (): Outcome => ({ called: true }),
      (failure: unknown): Outcome => ({ failure: failure ?? new Error('delivery failed'), called: true }),
    );
  /** A refused or failed list, member by member. */
  const memberByMember = async (members: Planned[], listFailure: unknown) => {
    const retryable = !(listFailure instanceof SmlError && listFailure.final);
    let failures = 0;
    let answered = 0;
    await Promise.all(
      members.map(async (member) => {
        const outcome = await turn(async (): Promise<Outcome> => {
          if (retryable && failures >= concurrency && answered === 0) return { failure: listFailure, called: true };
          try {
            await single(member);
            answered += 1;
            return { called: true };
          } catch (failure) {
            failures += 1;
            return { failure: failure ?? new Error('delivery failed'), called: true };
          }
        });
        outcomes.set(member.participant, outcome);
      }),
    );
  };
  const asList = async (members: Planned[], kind: 'create' | 'delete') => {
    if (members.length === 1) {
      const [member] = members as [Planned];
      return void outcomes.set(member.participant, await one(member));
    }
    const participants = members.map((member) => member.participant);
    try {
      await turn(() => (kind === 'create' ? sml.createList(participants) : sml.deleteList(participants)));
    } catch (failure) {
      return memberByMember(members, failure);
    }
    if (kind === 'create') await recordSmlRegistered(db, participants);
    else await forgetSmlAll(db, participants);
    for (const participant of participants) outcomes.set(participant, { called: true });
  };
  const of = (action: SmlAction) => actions.filter((planned) => planned.action === action);
  const forget = of('forget').map((planned) => planned.participant);
  if (forget.length > 0) await forgetSmlAll(db, forget);
  await Promise.all([
    ...chunked(of('create'), listSize).map((members) => asList(members, 'create')),
    ...chunked(of('delete'), listSize).map((members) => asList(members, 'delete')),
    ...of('migrate').map(async (planned) => void outcomes.set(planned.participant, await one(planned))),
  ]);
  return entries.map((entry) => outcomes.get(entry.participant) ?? { called: false });
}
