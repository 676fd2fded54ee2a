/**
 * The participant write operations (add, update, transfer, delete) with every rule of the API, each inside the caller's
 * transaction: the one path for the routes, the JSON-lines import and the demo set.
 */
import { appendChange, SYSTEM_ACTOR, type Actor, type Change } from '../db/change-log.js';
import type { Queryable } from '../db/database.js';
import { PROCESS_REFERENCE, resolveReferences } from '../db/references.js';
import {
  processesFromDatabase,
  processesNamed,
  type HeldProcesses,
  type ProcessSource,
} from '../processes/repository.js';
import { newParticipantIcdErrors } from '../identifier-schemes/checks.js';
import {
  identifierSchemesFromDatabase,
  readIdentifierSchemes,
  type HeldIdentifierSchemes,
} from '../identifier-schemes/repository.js';
import { IdentifierSchemeList } from '../identifier-schemes/schemes.js';
import type { Process } from '../processes/schemas.js';
import { NotFoundError, ValidationError, type FieldErrorInput } from '../core/errors.js';
import { qualifiedNameOf, type ContactForm, type Reference } from '../core/schemas.js';
import {
  participantKeyOrNotFound,
  participantNotFound,
  storedOrganizationIdentifier,
  type Organization,
} from './identifiers.js';
import { removeExpired, type ExpiryDue } from './expiry-sql.js';
import { participantIdsWithIcds, participantOfRecord, type ParticipantRecord, type Scope } from './repository.js';
import { processRuleErrors, processRuleOf } from './rules.js';
import { serviceProviderExists } from './service-provider-lookups.js';
import { valueFaultOf } from './value-rules.js';
import { checkServiceProviderIdentifier, isSpis } from './service-provider-identifiers.js';
import {
  deleteParticipants,
  insertParticipant,
  insertParticipants,
  insertParticipantUnlessExpired,
  linkProcessesOf,
  lockOrganization,
  lockParticipant,
  setProcesses,
  transferParticipant,
  updateParticipant,
  type ContactRecord,
  type NewParticipant,
} from './write-sql.js';
import type { AddParticipantForm, Participant, UpdateParticipantForm } from './schemas.js';

export const ADD_FORM = 'addParticipantFormDTO';
export const UPDATE_FORM = 'updateParticipantFormDTO';

/**
 * What a registration does with an organization identifier that breaks its scheme's rule (value-rules.ts): `refuse`
 * it (the default), or `record` it, stored with its fault for the listing (IDENTIFIER_VALUE_CHECKS=false, a test
 * environment).
 */
export type ValueChecks = 'refuse' | 'record';

const contactOf = (contact: ContactForm): ContactRecord => ({
  name: contact.name,
  email: contact.email ?? null,
  phoneNumber: contact.phoneNumber ?? null,
});

/** A delete date must lie in the future: today's would remove the participant at once. */
function deleteDateErrors(deleteDate: string | undefined): Entry[] {
  const today = new Date().toISOString().slice(0, 10);
  if (deleteDate === undefined || deleteDate > today) return [];
  return [
    {
      field: 'deleteDate',
      code: 'Future',
      rejectedValue: deleteDate,
      typeName: 'LocalDate',
      defaultMessage: 'must be a future date',
    },
  ];
}

/** The organization identifier's refusal when it breaks its scheme's rule and `checks` refuses it; else none. */
function identifierErrors(form: AddParticipantForm, checks: ValueChecks): Entry[] {
  const fault = valueFaultOf(form.icd, form.organizationIdentifier);
  if (fault === undefined || checks === 'record') return [];
  return [
    {
      field: 'organizationIdentifier',
      code: 'IdentifierRule',
      rejectedValue: form.organizationIdentifier,
      defaultMessage: fault,
    },
  ];
}

/** What a new participant's write reads of the catalogue cache: its processes and the accepted ICDs. */
export type HeldCatalogue = HeldProcesses & HeldIdentifierSchemes;

type Entry = Omit<FieldErrorInput, 'objectName'>;

/**
 * Resolves the form's processes and applies the participant rules; every violation, of the references,
 * the rules and the delete date, is reported at once, after those the caller found already (`found`: the ICD's and
 * the organization identifier's).
 */
async function processIdsOf(
  tx: Queryable,
  objectName: string,
  form: { processes: Reference[]; deleteDate?: string },
  icd: string,
  currentIds: readonly string[],
  catalogue: HeldProcesses | undefined,
  found: readonly Entry[] = [],
): Promise<string[]> {
  const cachedIds = await catalogue?.processIdsOf(form.processes, tx);
  const { ids, errors } = cachedIds
    ? { ids: cachedIds, errors: [] }
    : await resolveReferences(tx, PROCESS_REFERENCE, form.processes, 'processes');
  const rules = (await processSource(tx, catalogue).processesIn(ids)).map(processRuleOf);
  const violations = [
    ...found,
    ...errors,
    ...processRuleErrors(form.processes, rules, icd, currentIds),
    ...deleteDateErrors(form.deleteDate),
  ];
  if (violations.length > 0) throw ValidationError.of(objectName, violations);
  return ids;
}

/** Where processes are read from: the catalogue cache when the caller has one (loading through `tx`), else `tx`. */
const processSource = (tx: Queryable, catalogue: HeldProcesses | undefined): ProcessSource =>
  catalogue ? { processesIn: (ids) => catalogue.processesIn(ids, tx) } : processesFromDatabase(tx);

/** The change log entry of a write the participant outlives, named by its qualified identifier (no write changes it). */
const participantChange = (
  operation: 'create' | 'update' | 'transfer',
  before: Participant | null,
  after: Participant,
): Change => ({ resource: 'participant', identifier: after.qualifiedIdentifier, operation, before, after });

/** The change log entry of a participant's end (after = null): deleted, expired, or migrated to another SMP. */
const participantEnd =
  (operation: 'delete' | 'expire' | 'migrate') =>
  (before: Participant): Change => ({
    resource: 'participant',
    identifier: before.qualifiedIdentifier,
    operation,
    before,
    after: null,
  });

/**
 * Removes the participants whose delete date has come and logs each one's expiry ('expire', by the system, after =
 * null), so the SML, the Directory and every follower of the log see it go: the midnight sweep's one step, and what a
 * write does first with its organization's expired participants, which would otherwise hold it. Returns how many.
 */
export async function expireParticipants(tx: Queryable, due: ExpiryDue): Promise<number> {
  const expired = await removeExpired(tx, due);
  await appendChange(tx, SYSTEM_ACTOR, expired.map(participantEnd('expire')));
  return expired.length;
}

/**
 * Registers a participant for a service provider, with an ICD the identifier schemes accept now; returns it as the API
 * shows it. `catalogue`: where processes and the schemes are read from (the cache; without it, the database), here and
 * in the other writes.
 */
export async function registerParticipant(
  tx: Queryable,
  actor: Actor,
  serviceProviderId: string,
  form: AddParticipantForm,
  catalogue?: HeldCatalogue,
  checks: ValueChecks = 'refuse',
): Promise<Participant> {
  const record = newParticipantOf(serviceProviderId, form);
  const schemes = await (catalogue ?? identifierSchemesFromDatabase(tx)).identifierSchemes(tx);
  const found = [...newParticipantIcdErrors(schemes, form.icd), ...identifierErrors(form, checks)];
  const processIds = await processIdsOf(tx, ADD_FORM, form, form.icd, [], catalogue, found);
  if (isSpis(form.icd)) await checkServiceProviderIdentifier(tx, actor, serviceProviderId, form.organizationIdentifier);
  let stored = await insertParticipantUnlessExpired(tx, record, processIds);
  if (!stored) {
    await expireParticipants(tx, { organization: record });
    stored = await insertParticipant(tx, record, processIds);
  }
  const { processIds: inserted, ...participant } = stored;
  const after = { ...participant, processes: await processSource(tx, catalogue).processesIn(inserted) };
  await appendChange(tx, actor, participantChange('create', null, after));
  return after;
}

const newParticipantOf = (serviceProviderId: string, form: AddParticipantForm): NewParticipant => ({
  icd: form.icd,
  organizationIdentifier: storedOrganizationIdentifier(form.organizationIdentifier),
  serviceProviderId,
  organizationPartIdentifier: form.organizationPartIdentifier ?? null,
  sourceIndicator: form.sourceIndicator ?? null,
  name: form.name ?? null,
  deleteDate: form.deleteDate ?? null,
  contact: contactOf(form.contact),
  identifierFault: valueFaultOf(form.icd, form.organizationIdentifier) ?? null,
});

export interface Registration {
  serviceProviderId: string;
  form: AddParticipantForm;
}

/**
 * What became of each registration of a batch: stored (as the API shows it); 'present' when its provider has the
 * organization already (stored before, or earlier in the batch); 'oneByOne' when the batch cannot settle it (a rule
 * broken, a reference unknown, a process another provider serves): `registerParticipant` gives it its exact answer.
 */
export type BatchOutcome = Participant | 'present' | 'oneByOne';

/**
 * Registers many participants with the rules of `registerParticipant`, in a handful of statements whatever their
 * number: references resolved at once, organizations cleared of expired participants at once, participants and their
 * processes inserted by multi-row statements, one 'create' change each logged by one insert.
 */
export async function registerParticipants(
  tx: Queryable,
  actor: Actor,
  registrations: readonly Registration[],
  checks: ValueChecks = 'refuse',
): Promise<BatchOutcome[]> {
  const outcomes: BatchOutcome[] = registrations.map(() => 'oneByOne');
  const catalogue = await batchCatalogue(tx, registrations);
  let wanted = new Map<number, { record: NewParticipant; processIds: string[] }>();
  registrations.forEach(({ serviceProviderId, form }, index) => {
    const processIds = identifierErrors(form, checks).length === 0 ? catalogue.settledIds(form) : undefined;
    if (processIds) wanted.set(index, { record: newParticipantOf(serviceProviderId, form), processIds });
  });
  if (wanted.size === 0) return outcomes;
  await expireParticipants(tx, { organizations: [...wanted.values()].map(({ record }) => record) });
  let stored: Map<number, Omit<Participant, 'processes'>>;
  for (;;) {
    await tx.query('SAVEPOINT participant_batch');
    const inserted = await insertBatch(
      tx,
      [...wanted].map(([index, { record }]) => [index, record]),
    );
    const linked = await linkProcessesOf(
      tx,
      [...wanted].flatMap(([index, { processIds }]) => {
        const participant = inserted.get(index);
        return participant ? processIds.map((processId) => ({ participantId: participant.identifier, processId })) : [];
      }),
    );
    const linkCount = new Map<string, number>();
    for (const link of linked) linkCount.set(link.participantId, (linkCount.get(link.participantId) ?? 0) + 1);
    const refused = [...inserted].filter(
      ([index, participant]) => (linkCount.get(participant.identifier) ?? 0) !== wanted.get(index)?.processIds.length,
    );
    stored = inserted;
    if (refused.length === 0) break;
    await tx.query('ROLLBACK TO SAVEPOINT participant_batch');
    wanted = new Map([...wanted].filter(([index]) => !refused.some(([loser]) => loser === index)));
  }
  await tx.query('RELEASE SAVEPOINT participant_batch');
  for (const [index, { processIds }] of wanted) {
    const participant = stored.get(index);
    outcomes[index] = participant ? { ...participant, processes: catalogue.processesIn(processIds) } : 'present';
  }
  await appendChange(
    tx,
    actor,
    outcomes
      .filter((outcome): outcome is Participant => typeof outcome === 'object')
      .map((after) => participantChange('create', null, after)),
  );
  return outcomes;
}

/** Inserts the records; the stored participants by the index of their record (those left out were present). */
async function insertBatch(
  tx: Queryable,
  records: [number, NewParticipant][],
): Promise<Map<number, Omit<Participant, 'processes'>>> {
  const keyOf = (providerId: string, icd: string, organizationIdentifier: string) =>
    `${providerId}|${icd}|${organizationIdentifier}`;
  const inserted = new Map(
    (
      await insertParticipants(
        tx,
        records.map(([, record]) => record),
      )
    ).map((participant) => [
      keyOf(participant.provider.identifier, participant.icd, participant.organizationIdentifier),
      participant,
    ]),
  );
  const stored = new Map<number, Omit<Participant, 'processes'>>();
  for (const [index, record] of records) {
    const key = keyOf(record.serviceProviderId.toLowerCase(), record.icd, record.organizationIdentifier);
    const participant = inserted.get(key);
    if (!participant) continue;
    stored.set(index, participant);
    inserted.delete(key);
  }
  return stored;
}

/** The processes a batch names, read at once; settles the references and rules of each form on them. */
async function batchCatalogue(tx: Queryable, registrations: readonly Registration[]) {
  const references = registrations.flatMap((registration) => registration.form.processes);
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const reference of references) {
    if (reference.identifier) ids.add(reference.identifier.toLowerCase());
    else {
      const name = qualifiedNameOf(reference);
      if (name !== undefined) names.add(name);
    }
  }
  const processes = await processesNamed(tx, [...ids], [...names]);
  const schemes = new IdentifierSchemeList(await readIdentifierSchemes(tx));
  const byId = new Map(processes.map((process) => [process.identifier, process]));
  const byName = new Map(processes.map((process) => [process.qualifiedIdentifier, process]));
  const processOf = (reference: Reference): Process | undefined => {
    if (reference.identifier) return byId.get(reference.identifier.toLowerCase());
    const name = qualifiedNameOf(reference);
    return name === undefined ? undefined : byName.get(name);
  };
  const processesIn = (wanted: readonly string[]) => processes.filter((process) => wanted.includes(process.identifier));
  return {
    processesIn,
    /**
     * The form's process ids when its ICD is accepted, every reference known and every rule kept; else undefined. A
     * service provider identifier (0242) is settled one by one, against its provider's certificates.
     */
    settledIds(form: AddParticipantForm): string[] | undefined {
      if (isSpis(form.icd)) return undefined;
      const named = form.processes.map(processOf);
      if (!named.every((process) => process !== undefined)) return undefined;
      const processIds = [...new Set(named.map((process) => process.identifier))];
      const rules = processesIn(processIds).map(processRuleOf);
      const broken =
        newParticipantIcdErrors(schemes, form.icd).length +
          processRuleErrors(form.processes, rules, form.icd, []).length +
          deleteDateErrors(form.deleteDate).length >
        0;
      return broken ? undefined : processIds;
    },
  };
}

/** The participant a path segment names within the caller's scope, locked until the transaction ends; else 404. */
async function lockOwn(tx: Queryable, segment: string, scope: Scope): Promise<ParticipantRecord> {
  const participant = await lockParticipant(tx, participantKeyOrNotFound(segment), scope);
  if (!participant) throw participantNotFound(segment);
  return participant;
}

/** Replaces the participant's processes, contact and delete date; returns it as the API shows it. */
export async function updateRegistration(
  tx: Queryable,
  actor: Actor,
  segment: string,
  scope: Scope,
  form: UpdateParticipantForm,
  catalogue?: HeldProcesses,
): Promise<Participant> {
  const participant = await lockOwn(tx, segment, scope);
  const processIds = await processIdsOf(tx, UPDATE_FORM, form, participant.icd, participant.processIds, catalogue);
  const before = await participantOfRecord(participant, processSource(tx, catalogue));
  await expireParticipants(tx, { organization: participant });
  await setProcesses(tx, participant, processIds);
  const updated = await updateParticipant(tx, participant.identifier, contactOf(form.contact), form.deleteDate ?? null);
  const after = await participantOfRecord(updated, processSource(tx, catalogue));
  await appendChange(tx, actor, participantChange('update', before, after));
  return after;
}

/** Moves the participant to the service provider `targetSegment` names (its UUID, any case). */
export async function transferRegistration(
  tx: Queryable,
  actor: Actor,
  segment: string,
  scope: Scope,
  targetSegment: string,
  catalogue?: HeldProcesses,
): Promise<void> {
  const participant = await lockOwn(tx, segment, scope);
  const target = targetSegment.toLowerCase();
  if (!(await serviceProviderExists(tx, target))) throw NotFoundError.instance(targetSegment);
  if (isSpis(participant.icd))
    await checkServiceProviderIdentifier(tx, actor, target, participant.organizationIdentifier);
  const before = await participantOfRecord(participant, processSource(tx, catalogue));
  await expireParticipants(tx, { organization: participant });
  const after = await participantOfRecord(
    await transferParticipant(tx, participant, target),
    processSource(tx, catalogue),
  );
  await appendChange(tx, actor, participantChange('transfer', before, after));
}

/**
 * Ends every participant of an organization another SMP has taken over (the SML migrated it), logged as 'migrate'
 * (after = null) so the audit, the feed and the Directory hear of it. Returns how many ended.
 */
export async function endMigratedOrganization(
  tx: Queryable,
  actor: Actor,
  organization: Organization,
  catalogue?: HeldProcesses,
): Promise<number> {
  await lockOrganization(tx, organization);
  const deleted = await deleteParticipants(tx, { kind: 'qualified', organization }, null);
  deleted.sort((a, b) => (a.identifier < b.identifier ? -1 : 1));
  const source = processSource(tx, catalogue);
  const ended = await Promise.all(deleted.map((record) => participantOfRecord(record, source)));
  await appendChange(tx, actor, ended.map(participantEnd('migrate')));
  return ended.length;
}

/** Deletes the participant the path segment names within the caller's scope (its qualified identifier); 404 when there is none. */
export async function deleteRegistration(
  tx: Queryable,
  actor: Actor,
  segment: string,
  scope: Scope,
  catalogue?: HeldProcesses,
): Promise<string> {
  const [deleted] = await deleteParticipants(tx, participantKeyOrNotFound(segment), scope);
  if (!deleted) throw participantNotFound(segment);
  const before = await participantOfRecord(deleted, processSource(tx, catalogue));
  await appendChange(tx, actor, participantEnd('delete')(before));
  return before.qualifiedIdentifier;
}

/** The most participants one call ends: each is a delete with its deliveries; the answer says how many remain. */
export const MOST_ENDED_AT_ONCE = 500;

/**
 * Ends the participants whose ICD is one of `icds` (those the code list removed), each through the normal delete (so
 * the SML and the Directory follow the log), at most MOST_ENDED_AT_ONCE: their qualified identifiers, and how many
 * remain.
 */
export async function endParticipantsWithIcds(
  tx: Queryable,
  actor: Actor,
  icds: readonly string[],
  catalogue?: HeldProcesses,
): Promise<{ ended: string[]; remaining: number }> {
  const { ids, total } = await participantIdsWithIcds(tx, icds, MOST_ENDED_AT_ONCE);
  const ended: string[] = [];
  for (const id of ids) ended.push(await deleteRegistration(tx, actor, id, null, catalogue));
  return { ended, remaining: total - ended.length };
}
