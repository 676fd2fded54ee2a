/**
 * The participants' read model: the participant as the API shows it, its finds, stream and gets, the live condition
 * and the caller's scope; the writes' SQL (write-sql.ts) and the expiry's (expiry-sql.ts) answer in the same columns.
 */
import { batchableRead } from '../db/batched-reads.js';
import { STREAM_BATCH_MAX_BYTES, type Database, type Queryable } from '../db/database.js';
import { Conditions, escapeLikeWildcards, selectPage } from '../db/sql.js';
import type { PageRequest, Sortable } from '../core/paging.js';
import { PROCESS_RESPONSE_COLUMNS, processesFromDatabase, type ProcessSource } from '../processes/repository.js';
import { PARTICIPANT_SCHEME, qualifiedIdentifierOf, type ParticipantKey } from './identifiers.js';
import type { Process } from '../processes/schemas.js';
import type { Participant, ParticipantFilter } from './schemas.js';

/** Today in UTC, whatever the session's time zone: the day of registrations, changes and expiry. */
export const TODAY = `(now() AT TIME ZONE 'UTC')::date`;

/**
 * The SQL condition that participant row `alias` is live: one whose delete date has come is gone from every answer.
 * Organizations and service providers count participants with it too.
 */
export const participantIsLive = (alias: string) =>
  // As a subquery, today is computed once per statement rather than once per row tested.
  `(${alias}.delete_date IS NULL OR ${alias}.delete_date > (SELECT ${TODAY}))`;

/**
 * Whether participant `alias` still has something publishable: no process at all (registered as before), or a process
 * not past its removal instant that has no document type or one not past its own. A participant whose every process
 * or document type was removed has nothing left the SMP publishes: the SML and the Directory drop it.
 */
export const participantPublishes = (alias: string) => `(
  NOT EXISTS (SELECT 1 FROM participant_processes pp WHERE pp.participant_id = ${alias}.id)
  OR EXISTS (SELECT 1 FROM participant_processes pp JOIN processes p ON p.id = pp.process_id
              WHERE pp.participant_id = ${alias}.id AND (p.removed_from IS NULL OR p.removed_from > now())
                AND (NOT EXISTS (SELECT 1 FROM process_document_types pdt WHERE pdt.process_id = p.id)
                     OR EXISTS (SELECT 1 FROM process_document_types pdt JOIN document_types d ON d.id = pdt.document_type_id
                                 WHERE pdt.process_id = p.id AND (d.removed_from IS NULL OR d.removed_from > now())))))`;

/** Whose participants a caller sees: a service provider's id, or null for all (ADMIN, REGISTRY_AUTHORITY). */
export type Scope = string | null;

/** The processes of a participant as one JSON array, in qualified identifier order. */
const processesOf = (participantId: string) => `
  (SELECT coalesce(json_agg(x ORDER BY x."qualifiedIdentifier", x.identifier), '[]'::json)
     FROM (SELECT ${PROCESS_RESPONSE_COLUMNS} FROM participant_processes pp JOIN processes p ON p.id = pp.process_id
            WHERE pp.participant_id = ${participantId}) x)`;

/** The columns of participant row `pa` as the API shows it; its processes too with `withProcesses`. */
export const participantColumns = (withProcesses: boolean) => `
  pa.id AS identifier,
  '${PARTICIPANT_SCHEME}::' || pa.icd || ':' || pa.organization_identifier AS "qualifiedIdentifier",
  pa.icd, pa.organization_identifier AS "organizationIdentifier",
  pa.organization_part_identifier AS "organizationPartIdentifier", pa.source_indicator AS "sourceIndicator", pa.name,
  pa.registration_date AS "registrationDate", pa.last_modification_date AS "lastModificationDate",
  pa.delete_date AS "deleteDate",
  json_build_object('name', pa.contact_name, 'email', pa.contact_email, 'phoneNumber', pa.contact_phone) AS contact,
  (SELECT json_build_object('identifier', sp.id, 'title', sp.title) FROM service_providers sp
    WHERE sp.id = pa.service_provider_id) AS provider
  ${withProcesses ? `, ${processesOf('pa.id')} AS processes` : ''}`;

const QUALIFIED_VALUE = `pa.icd || ':' || pa.organization_identifier`;

export const PARTICIPANT_SORTABLE: Sortable = {
  identifier: 'pa.id',
  qualifiedIdentifier: QUALIFIED_VALUE,
  'qualifiedIdentifier.scheme': `'${PARTICIPANT_SCHEME}'::text`,
  'qualifiedIdentifier.value': QUALIFIED_VALUE,
  icd: 'pa.icd',
  organizationIdentifier: 'pa.organization_identifier',
  organizationPartIdentifier: 'pa.organization_part_identifier',
  sourceIndicator: 'pa.source_indicator',
  name: 'pa.name',
  registrationDate: 'pa.registration_date',
  lastModificationDate: 'pa.last_modification_date',
  deleteDate: 'pa.delete_date',
  'contact.name': 'pa.contact_name',
  'contact.email': 'pa.contact_email',
  'contact.phoneNumber': 'pa.contact_phone',
  'provider.identifier': 'pa.service_provider_id',
  'provider.title': '(SELECT sp.title FROM service_providers sp WHERE sp.id = pa.service_provider_id)',
};
export const PARTICIPANT_TIE_BREAKER = 'pa.id';

function scoped(scope: Scope): Conditions {
  const conditions = new Conditions().where(participantIsLive('pa'));
  if (scope !== null) conditions.where(`pa.service_provider_id = ${conditions.param(scope)}`);
  return conditions;
}

/** What `query` (or its alias `search`) asks for, lowercased; empty or undefined for no name/number match. */
export const searchTextOf = (filter: ParticipantFilter) => (filter.query ?? filter.search)?.toLowerCase();

function filterConditions(filter: ParticipantFilter, scope: Scope): Conditions {
  const conditions = scoped(scope);
  const text = searchTextOf(filter);
  if (text) {
    const escaped = escapeLikeWildcards(text);
    // Matches the trigram index on name_lower (the stored lower(name)) and the prefix index on organization_identifier.
    conditions.where(`(pa.name_lower LIKE ${conditions.param(`%${escaped}%`)}
                       OR pa.organization_identifier LIKE ${conditions.param(`${escaped}%`)})`);
  }
  if (filter.icd) conditions.where(`pa.icd = ${conditions.param(filter.icd)}`);
  if (filter.lastModificationDate)
    conditions.where(`pa.last_modification_date = ${conditions.param(filter.lastModificationDate)}::date`);
  if (filter.lastModificationDateFrom)
    conditions.where(`pa.last_modification_date >= ${conditions.param(filter.lastModificationDateFrom)}::date`);
  if (filter.lastModificationDateTo)
    conditions.where(`pa.last_modification_date <= ${conditions.param(filter.lastModificationDateTo)}::date`);
  return conditions;
}

/**
 * A query of at least a trigram's length is found through the trigram index, each hit read from the table for
 * the recheck: the page is then found, and the hits counted, in that one scan. A shorter one cannot use the
 * index and matches broadly: walking the page's order finds its page at once, and the total is counted apart.
 */
const TRIGRAM = 3;

/** A page of the participants the filter finds, and their total: counted here unless `total` gives it. */
export function findParticipants(
  db: Queryable,
  filter: ParticipantFilter,
  scope: Scope,
  page: PageRequest,
  total?: number,
) {
  return selectPage<Participant>(db, {
    select: participantColumns(filter.processes),
    from: 'participants pa',
    key: 'pa.id',
    countInPageScan: (searchTextOf(filter)?.length ?? 0) >= TRIGRAM,
    conditions: filterConditions(filter, scope),
    page,
    total,
  });
}

/** A page of the live participants in scope whose ICD is one of `icds` (those the code list removed). */
export function findParticipantsWithIcds(db: Queryable, icds: readonly string[], scope: Scope, page: PageRequest) {
  const conditions = scoped(scope);
  conditions.where(`pa.icd = ANY(${conditions.param(icds)}::text[])`);
  return selectPage<Participant>(db, {
    select: participantColumns(false),
    from: 'participants pa',
    key: 'pa.id',
    conditions,
    page,
  });
}

/** The ids of the first `limit` live participants whose ICD is one of `icds`, in qualified identifier order; and how many there are. */
export async function participantIdsWithIcds(db: Queryable, icds: readonly string[], limit: number) {
  const [row] = await db.query<{ ids: string[]; total: number }>(
    `SELECT coalesce((SELECT array_agg(id::text ORDER BY icd, organization_identifier, id)
                        FROM (SELECT pa.id, pa.icd, pa.organization_identifier FROM participants pa
                               WHERE pa.icd = ANY($1::text[]) AND ${participantIsLive('pa')}
                               ORDER BY pa.icd, pa.organization_identifier, pa.id LIMIT $2) first), '{}') AS ids,
            (SELECT count(*)::int FROM participants pa WHERE pa.icd = ANY($1::text[]) AND ${participantIsLive('pa')}) AS total`,
    [icds, limit],
  );
  return row ?? { ids: [], total: 0 };
}

/**
 * The page the in-memory search found (its ids, in identifier order) with its total. The rows are read with the
 * search's conditions as well, so a participant changed in the moment since the index heard of it is never shown
 * outside the caller's scope or the filter; the total is the index's.
 */
export async function participantsFound(
  db: Queryable,
  found: { total: number; ids: string[] },
  filter: ParticipantFilter,
  scope: Scope,
): Promise<{ total: number; rows: Participant[] }> {
  if (found.ids.length === 0) return { total: found.total, rows: [] };
  const conditions = filterConditions(filter, scope);
  const ids = conditions.param(found.ids);
  // Materialized: the page's rows are found by their keys, and only they are tested; the planner would otherwise
  // find them through the trigram index, rechecking every hit (what the index in memory is there to spare).
  const rows = await db.query<Participant>(
    `WITH pa AS MATERIALIZED (SELECT * FROM participants WHERE id = ANY(${ids}::uuid[]))
     SELECT ${participantColumns(filter.processes)} FROM pa ${conditions.clause} ORDER BY pa.id`,
    conditions.params,
  );
  return { total: found.total, rows };
}

/** A participant as the stream reads it: plain columns, which cost the database and the driver least per row. */
interface ParticipantRow {
  id: string;
  icd: string;
  organization_identifier: string;
  organization_part_identifier: string | null;
  source_indicator: string | null;
  name: string | null;
  registration_date: string;
  last_modification_date: string;
  delete_date: string | null;
  contact_name: string;
  contact_email: string | null;
  contact_phone: string | null;
  service_provider_id: string;
  provider_title: string;
  processes?: Process[];
}

const participantOfRow = (row: ParticipantRow): Participant => ({
  identifier: row.id,
  qualifiedIdentifier: qualifiedIdentifierOf({ icd: row.icd, organizationIdentifier: row.organization_identifier }),
  icd: row.icd,
  organizationIdentifier: row.organization_identifier,
  organizationPartIdentifier: row.organization_part_identifier,
  sourceIndicator: row.source_indicator,
  name: row.name,
  registrationDate: row.registration_date,
  lastModificationDate: row.last_modification_date,
  deleteDate: row.delete_date,
  contact: { name: row.contact_name, email: row.contact_email, phoneNumber: row.contact_phone },
  provider: { identifier: row.service_provider_id, title: row.provider_title },
  ...(row.processes && { processes: row.processes }),
});

/**
 * Rows a stream asks the cursor for at a time: few round trips, while a batch (and the one fetched meanwhile) stays
 * small enough to be collected young; 5,000 gave no more rows per second and a higher peak of resident memory.
 */
const STREAM_BATCH = 1000;

/**
 * Every hit, read through a cursor and handed out in batches: memory does not grow with the number of participants.
 * The provider is joined (the planner memoizes its few rows) rather than looked up by a subquery per row. With its
 * processes a row grows with their number, so a batch then also stops at `maxBytes`; without them its fields bound
 * it (1,000 rows stay under about 4.5 MB), so its batch is not measured, which would cost a third of its speed.
 */
export async function* streamParticipants(
  db: Database,
  filter: ParticipantFilter,
  scope: Scope,
  orderBy: string,
  maxBytes = STREAM_BATCH_MAX_BYTES,
): AsyncGenerator<Participant[]> {
  const conditions = filterConditions(filter, scope);
  const rows = db.stream<ParticipantRow>(
    `SELECT pa.id, pa.icd, pa.organization_identifier, pa.organization_part_identifier, pa.source_indicator, pa.name,
            pa.registration_date, pa.last_modification_date, pa.delete_date, pa.contact_name, pa.contact_email,
            pa.contact_phone, pa.service_provider_id, sp.title AS provider_title
            ${filter.processes ? `, ${processesOf('pa.id')} AS processes` : ''}
       FROM participants pa JOIN service_providers sp ON sp.id = pa.service_provider_id
       ${conditions.clause} ${orderBy}`,
    conditions.params,
    STREAM_BATCH,
    filter.processes ? maxBytes : undefined,
  );
  for await (const batch of rows) yield batch.map(participantOfRow);
}

/** The live participant a key names within the caller's scope. */
export function located(key: ParticipantKey, scope: Scope): Conditions {
  const conditions = scoped(scope);
  if (key.kind === 'identifier') return conditions.where(`pa.id = ${conditions.param(key.id)}::uuid`);
  const { icd, organizationIdentifier } = key.organization;
  return conditions
    .where(`pa.icd = ${conditions.param(icd)}`)
    .where(`pa.organization_identifier = ${conditions.param(organizationIdentifier)}`);
}

/**
 * The ids of participant `participantId`'s processes, as a JSON array: node-postgres reads it with `JSON.parse`, where
 * a text array's literal is parsed a character at a time in JavaScript (some 4 % of a participant read's main thread).
 */
export const processIdsOf = (participantId: string) =>
  `array_to_json(ARRAY(SELECT pp.process_id FROM participant_processes pp WHERE pp.participant_id = ${participantId}))`;

/**
 * The processes of participant `participantId` as a JSON array of `[id, day]`: each one's id and the day (since
 * 1970-01-01, UTC) the participant was given it, the day organization processes show as `receivableSince`.
 */
export const processesSinceOf = (participantId: string) =>
  `array_to_json(ARRAY(SELECT json_build_array(pp.process_id, (pp.added_at AT TIME ZONE 'UTC')::date - DATE '1970-01-01')
                         FROM participant_processes pp WHERE pp.participant_id = ${participantId}))`;

/** A participant as the API shows it, with the ids of its processes in place of them. */
export type ParticipantRecord = Omit<Participant, 'processes'> & { processIds: string[] };

/** The columns of participant row `pa` as a `ParticipantRecord`: what a read, a lock and a delete answer. */
export const PARTICIPANT_RECORD_COLUMNS = `${participantColumns(false)}, ${processIdsOf('pa.id')} AS "processIds"`;

/** The participant as the API shows it, its processes read from `processes` (the catalogue held in memory, mostly). */
export async function participantOfRecord(
  { processIds, ...participant }: ParticipantRecord,
  processes: ProcessSource,
): Promise<Participant> {
  return { ...participant, processes: await processes.processesIn(processIds) };
}

/**
 * Reads of a live participant in the caller's scope (the last parameter: a provider's id, or null for all), by its id
 * or by its organization, as `located` finds it: the routes' reads, which concurrent requests share statements for.
 */
function readsOfParticipant(columns: string) {
  const read = (condition: string, types: string[]) => {
    const scope = `$${types.length}::uuid`;
    return batchableRead(
      `SELECT ${columns} FROM participants pa
      WHERE ${condition} AND ${participantIsLive('pa')} AND (${scope} IS NULL OR pa.service_provider_id = ${scope})`,
      types,
    );
  };
  return {
    identifier: read('pa.id = $1::uuid', ['uuid', 'uuid']),
    qualified: read('pa.icd = $1 AND pa.organization_identifier = $2', ['text', 'text', 'uuid']),
  };
}

function readParticipant<T>(
  db: Queryable,
  reads: ReturnType<typeof readsOfParticipant>,
  key: ParticipantKey,
  scope: Scope,
) {
  return key.kind === 'identifier'
    ? db.readOne<T>(reads.identifier, [key.id, scope])
    : db.readOne<T>(reads.qualified, [key.organization.icd, key.organization.organizationIdentifier, scope]);
}

const PARTICIPANT_READS = readsOfParticipant(PARTICIPANT_RECORD_COLUMNS);
const PROCESS_IDS_READS = readsOfParticipant(`${processIdsOf('pa.id')} AS "processIds"`);

/** One indexed participant row with its process ids; the processes themselves come from `processes`. */
export async function getParticipant(
  db: Queryable,
  key: ParticipantKey,
  scope: Scope,
  processes: ProcessSource = processesFromDatabase(db),
): Promise<Participant | undefined> {
  const row = await readParticipant<ParticipantRecord>(db, PARTICIPANT_READS, key, scope);
  return row && participantOfRecord(row, processes);
}

export async function getParticipantProcesses(
  db: Queryable,
  key: ParticipantKey,
  scope: Scope,
  processes: ProcessSource = processesFromDatabase(db),
): Promise<Process[] | undefined> {
  const row = await readParticipant<{ processIds: string[] }>(db, PROCESS_IDS_READS, key, scope);
  return row && processes.processesIn(row.processIds);
}
