import { utcInstant } from '../db/sql.js';
import { appendChange, SYSTEM_ACTOR, type Actor, type ChangeResource } from '../db/change-log.js';
import type { Database, Queryable } from '../db/database.js';
import { formatQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import {
  processDomains,
  processTitleOf,
  type Catalogue,
  type CatalogueSource,
  type EntryLife,
  type EntryState,
} from './catalogue.js';
import type { IdentifierScheme } from '../identifier-schemes/schemes.js';
import { withRemovalNotices } from './removal-notices.js';

export interface Changes {
  added: number;
  updated: number;
  unchanged: number;
}

/** One entry the load added or changed, or whose authority's restriction it kept, with each field it changed. */
export interface EntryChange {
  list: 'processes' | 'document-types' | 'transport-profiles';
  entry: string;
  change: 'added' | 'updated' | 'kept';
  /** Each changed field, as the table names it, before and after (null: none). */
  fields: Array<{ field: string; before: unknown; after: unknown }>;
  /** Why an entry is `kept`: what the list said, and what stayed. */
  note?: string;
}

export interface LoadReport {
  processes: Changes;
  documentTypes: Changes;
  transportProfiles: Changes;
  links: { added: number; removed: number };
  /** Every entry added or changed, and every authority's restriction the list would have lifted, kept. */
  entries: EntryChange[];
  identifierSchemes: Changes;
  /** What changed of each scheme that changed, in ICD order: `0242 added (active)`, `0193: state active → deprecated`. */
  schemeChanges: string[];
  /** Links to processes that are neither in the load nor in the catalogue: skipped. */
  warnings: string[];
  sources: CatalogueSource[];
}

const restricted = (state: EntryState) => state !== 'active';
const visible = (state: EntryState) => state !== 'removed';

/**
 * Loads a catalogue in one transaction, upserting by qualified identifier so that loading twice changes
 * nothing and every identifier stays. A deprecated or removed entry becomes `restricted`, a removed one also
 * stops being visible; an entry active again is no longer restricted unless the authority restricted it (a
 * restriction no code list made: `code_list_state`), which stays and is reported as kept. What the code list carries
 * is updated (document type titles and domain communities, states, removal dates, each loaded document type's process
 * links); what the service makes up (a process's title and domain) is set only when the process is new, so
 * an authority's edits stay. A list without a removal date keeps one the authority set. Participants are never
 * touched. The report names every entry added or changed, field by field.
 */
export async function loadCatalogue(
  db: Database,
  catalogue: Catalogue,
  options: { allowOlder?: boolean; actor?: Actor } = {},
): Promise<LoadReport> {
  return db.transaction(async (tx) => {
    await lockCatalogue(tx);
    if (!options.allowOlder) await refuseOlderReleases(tx, catalogue.sources);
    const actor = options.actor ?? SYSTEM_ACTOR;
    return withRemovalNotices(tx, actor, () => loadInTransaction(tx, catalogue, actor));
  });
}

/** A release older than the one loaded: loading it by mistake would undo deprecations. */
export class OlderReleaseError extends Error {}

async function refuseOlderReleases(tx: Queryable, sources: readonly CatalogueSource[]): Promise<void> {
  const loaded = await tx.query<CatalogueSource>('SELECT list, version FROM catalogue_sources');
  for (const source of sources) {
    const current = loaded.find((row) => row.list === source.list);
    if (current && compareVersions(source.version, current.version) < 0) {
      throw new OlderReleaseError(
        `The ${source.list} list ${source.version} is older than the loaded ${current.version}: nothing loaded.`,
      );
    }
  }
}

/** Dotted release numbers compared part by part as numbers: 9.10 is newer than 9.9. */
export function compareVersions(a: string, b: string): number {
  const parts = (version: string) => version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const [left, right] = [parts(a), parts(b)];
  for (let index = 0; index < Math.max(left.length, right.length); index += 1) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * Loads the starter catalogue into a registry whose catalogue was never set up: no code list loaded yet and
 * no process. Undefined when there was nothing to do, so a restart never brings back what an authority removed.
 */
export async function loadIfNeverSetUp(db: Database, catalogue: Catalogue): Promise<LoadReport | undefined> {
  return db.transaction(async (tx) => {
    await lockCatalogue(tx);
    const [setUp] = await tx.query(
      'SELECT 1 FROM catalogue_sources UNION ALL SELECT 1 FROM processes UNION ALL SELECT 1 FROM document_types LIMIT 1',
    );
    return setUp ? undefined : loadInTransaction(tx, catalogue, SYSTEM_ACTOR);
  });
}

/** Serializes catalogue loads, also between instances sharing one PostgreSQL. */
async function lockCatalogue(tx: Queryable): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('registry-catalogue:' || current_schema()))`);
}

async function loadInTransaction(tx: Queryable, catalogue: Catalogue, actor: Actor): Promise<LoadReport> {
  const entries: EntryChange[] = [];
  const transportProfiles = await upsertTransportProfiles(tx, catalogue, actor, entries);
  const processes = await upsertProcesses(tx, catalogue, actor, entries);
  // Before the upsert: a document type this load creates has its create entry, and needs no entry for its links.
  const linksBefore = await processLinksOf(tx, loadedKeys(catalogue));
  const documentTypes = await upsertDocumentTypes(tx, catalogue, actor, entries);
  const { links, warnings } = await replaceLinks(tx, catalogue, actor, linksBefore);
  entries.push(...(await restrictionsKept(tx, catalogue)));
  const { identifierSchemes, schemeChanges } = await upsertIdentifierSchemes(tx, catalogue, actor);
  for (const source of catalogue.sources) {
    await tx.query(
      `INSERT INTO catalogue_sources (list, version) VALUES ($1, $2)
       ON CONFLICT (list) DO UPDATE SET version = EXCLUDED.version, loaded_at = now()`,
      [source.list, source.version],
    );
  }
  return {
    processes,
    documentTypes,
    transportProfiles,
    links,
    entries,
    identifierSchemes,
    schemeChanges,
    warnings,
    sources: catalogue.sources,
  };
}

interface UpsertedRow {
  id: string;
  inserted: boolean;
  before: unknown;
  after: unknown;
}

/**
 * Runs an upsert of `table` whose rows are matched on `keys` (the first parameters, as text arrays) and appends
 * the change of every row it added or changed, with the row before and after, to the change log.
 */
async function upsertAndLog(
  tx: Queryable,
  actor: Actor,
  resource: ChangeResource,
  table: string,
  keys: string[],
  upsert: string,
  params: unknown[],
): Promise<UpsertedRow[]> {
  const keyList = keys.map((key, index) => `$${index + 1}::text[]`).join(', ');
  const matches = keys.map((key) => `t.${key} = k.${key}`).join(' AND ');
  const rows = await tx.query<UpsertedRow>(
    `WITH old AS (SELECT t.id, to_jsonb(t) AS before FROM ${table} t JOIN unnest(${keyList}) AS k(${keys.join(', ')}) ON ${matches}),
          changed AS (${upsert} RETURNING ${table}.*, (xmax = 0) AS inserted)
     SELECT c.id, c.inserted, old.before, to_jsonb(c) - 'inserted' AS after FROM changed c LEFT JOIN old ON old.id = c.id`,
    params,
  );
  await appendChange(
    tx,
    actor,
    rows.map((row) => ({
      resource,
      identifier: row.id,
      operation: row.inserted ? ('create' as const) : ('update' as const),
      before: row.before,
      after: row.after,
    })),
  );
  return rows;
}

function changes(total: number, returned: readonly { inserted: boolean }[]): Changes {
  const added = returned.filter((row) => row.inserted).length;
  return { added, updated: returned.length - added, unchanged: total - returned.length };
}

/** The fields of a code-list entry's row a load may change, as the change log's rows name them. */
const REPORTED_FIELDS = [
  'title',
  'domain_community',
  'restricted',
  'visible',
  'removed_from',
  'code_list_state',
] as const;

/** The entries `rows` added or changed, each with the fields that changed (all it has, for one added). */
function entryChanges(
  list: EntryChange['list'],
  rows: readonly UpsertedRow[],
  nameOf: (row: Record<string, unknown>) => string,
): EntryChange[] {
  return rows.map((row) => {
    const before = (row.before ?? {}) as Record<string, unknown>;
    const after = row.after as Record<string, unknown>;
    const fields = REPORTED_FIELDS.filter(
      (field) => field in after && (row.inserted ? after[field] !== null : before[field] !== after[field]),
    ).map((field) => ({ field, before: row.inserted ? null : (before[field] ?? null), after: after[field] ?? null }));
    return { list, entry: nameOf(after), change: row.inserted ? ('added' as const) : ('updated' as const), fields };
  });
}

const qualifiedNameOfRow = (row: Record<string, unknown>) => `${String(row.scheme)}::${String(row.value)}`;

async function upsertTransportProfiles(
  tx: Queryable,
  catalogue: Catalogue,
  actor: Actor,
  report: EntryChange[],
): Promise<Changes> {
  const entries = catalogue.transportProfiles;
  const rows = await upsertAndLog(
    tx,
    actor,
    'transport-profile',
    'transport_profiles',
    ['value'],
    `INSERT INTO transport_profiles (value, title, restricted)
     SELECT * FROM unnest($1::text[], $2::text[], $3::boolean[])
     ON CONFLICT (value) DO UPDATE SET title = EXCLUDED.title, restricted = EXCLUDED.restricted
      WHERE (transport_profiles.title, transport_profiles.restricted) IS DISTINCT FROM (EXCLUDED.title, EXCLUDED.restricted)`,
    [
      entries.map((entry) => entry.value),
      entries.map((entry) => entry.title),
      entries.map((entry) => restricted(entry.state)),
    ],
  );
  report.push(...entryChanges('transport-profiles', rows, (row) => String(row.value)));
  return changes(entries.length, rows);
}

/**
 * What a load sets of a process or document type already in `table`, beside what the list carries: restricted
 * when the list restricts it or the authority did (a restriction no code list made), invisible when either made it so,
 * the list's removal date (else the one the authority set), the list's state.
 */
const lifeOnLoad = (table: string) => ({
  restricted: `EXCLUDED.restricted OR (${table}.restricted AND ${table}.code_list_state IS DISTINCT FROM 'deprecated'
                 AND ${table}.code_list_state IS DISTINCT FROM 'removed')`,
  visible: `${table}.visible AND EXCLUDED.visible`,
  removed_from: `coalesce(EXCLUDED.removed_from, ${table}.removed_from)`,
  code_list_state: 'EXCLUDED.code_list_state',
});

/** `SET` and `WHERE` of an upsert: each column as `values` sets it, the row changed only when one differs. */
function updateOf(table: string, values: Record<string, string>): string {
  const columns = Object.keys(values);
  return `SET ${columns.map((column) => `${column} = ${values[column]}`).join(', ')}
    WHERE (${columns.map((column) => `${table}.${column}`).join(', ')}) IS DISTINCT FROM (${Object.values(values).join(', ')})`;
}

/** The columns of a process's or document type's life as the load's parameters, from `first` on. */
const lifeParams = (entries: readonly EntryLife[]) => [
  entries.map((entry) => restricted(entry.state)),
  entries.map((entry) => visible(entry.state)),
  entries.map((entry) => entry.removedFrom ?? null),
  entries.map((entry) => entry.state),
];

async function upsertProcesses(
  tx: Queryable,
  catalogue: Catalogue,
  actor: Actor,
  report: EntryChange[],
): Promise<Changes> {
  const entries = catalogue.processes;
  const domains = processDomains(catalogue.documentTypes);
  const rows = await upsertAndLog(
    tx,
    actor,
    'process',
    'processes',
    ['scheme', 'value'],
    `INSERT INTO processes (scheme, value, title, domain, restricted, visible, removed_from, code_list_state)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::boolean[], $7::timestamptz[], $8::text[])
     ON CONFLICT (scheme, value) DO UPDATE ${updateOf('processes', lifeOnLoad('processes'))}`,
    [
      entries.map((entry) => entry.scheme),
      entries.map((entry) => entry.value),
      entries.map((entry) => entry.title ?? processTitleOf(entry.value)),
      entries.map((entry) => entry.domain ?? domains.get(formatQualifiedIdentifier(entry)) ?? entry.scheme),
      ...lifeParams(entries),
    ],
  );
  report.push(...entryChanges('processes', rows, qualifiedNameOfRow));
  return changes(entries.length, rows);
}

async function upsertDocumentTypes(
  tx: Queryable,
  catalogue: Catalogue,
  actor: Actor,
  report: EntryChange[],
): Promise<Changes> {
  const entries = catalogue.documentTypes;
  const rows = await upsertAndLog(
    tx,
    actor,
    'document-type',
    'document_types',
    ['scheme', 'value'],
    `INSERT INTO document_types (scheme, value, title, domain_community, restricted, visible, removed_from, code_list_state)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::boolean[], $7::timestamptz[], $8::text[])
     ON CONFLICT (scheme, value) DO UPDATE
     ${updateOf('document_types', { title: 'EXCLUDED.title', domain_community: 'EXCLUDED.domain_community', ...lifeOnLoad('document_types') })}`,
    [
      entries.map((entry) => entry.scheme),
      entries.map((entry) => entry.value),
      entries.map((entry) => entry.title),
      entries.map((entry) => entry.domainCommunity),
      ...lifeParams(entries),
    ],
  );
  report.push(...entryChanges('document-types', rows, qualifiedNameOfRow));
  return changes(entries.length, rows);
}

/** The loaded processes and document types the list calls active that stay restricted: the authority restricted them. */
async function restrictionsKept(tx: Queryable, catalogue: Catalogue): Promise<EntryChange[]> {
  const kept = async (list: 'processes' | 'document-types', table: string, entries: readonly QualifiedIdentifier[]) => {
    const rows = await tx.query<{ entry: string }>(
      `SELECT t.scheme || '::' || t.value AS entry FROM ${table} t JOIN unnest($1::text[], $2::text[]) AS k(scheme, value)
           ON t.scheme = k.scheme AND t.value = k.value
        WHERE t.restricted AND t.code_list_state = 'active' ORDER BY 1`,
      [entries.map((entry) => entry.scheme), entries.map((entry) => entry.value)],
    );
    return rows.map(({ entry }): EntryChange => ({
      list,
      entry,
      change: 'kept',
      fields: [],
      note: 'the code list has it active; the restriction the authority set is kept',
    }));
  };
  return [
    ...(await kept('processes', 'processes', catalogue.processes)),
    ...(await kept('document-types', 'document_types', catalogue.documentTypes)),
  ];
}

interface SchemeRow {
  icd: string;
  scheme_name: string;
  state: string;
  removal_date: string | null;
  validation_rules: string | null;
}

/**
 * Upserts the participant identifier schemes by ICD (a scheme no longer listed stays as it was: the lists mark entries
 * removed, they do not drop them), logging each change; the accepted ICDs follow at request time (identifier-schemes/).
 */
async function upsertIdentifierSchemes(tx: Queryable, catalogue: Catalogue, actor: Actor) {
  const entries = catalogue.identifierSchemes;
  const column = <K extends keyof IdentifierScheme>(key: K) => entries.map((entry) => entry[key]);
  const rows = await upsertAndLog(
    tx,
    actor,
    'identifier-scheme',
    'identifier_schemes',
    ['icd'],
    `INSERT INTO identifier_schemes (icd, scheme_id, scheme_name, country, issuing_agency, state, removal_date, registrable,
                                     structure, validation_rules, examples)
     SELECT icd, scheme_id, scheme_name, country, issuing_agency, state, removal_date::date, registrable, structure, validation_rules,
            ARRAY(SELECT jsonb_array_elements_text(examples::jsonb))
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::boolean[], $9::text[],
                   $10::text[], $11::text[])
            AS e(icd, scheme_id, scheme_name, country, issuing_agency, state, removal_date, registrable, structure, validation_rules, examples)
     ON CONFLICT (icd) DO UPDATE
        SET scheme_id = EXCLUDED.scheme_id, scheme_name = EXCLUDED.scheme_name, country = EXCLUDED.country,
            issuing_agency = EXCLUDED.issuing_agency, state = EXCLUDED.state, removal_date = EXCLUDED.removal_date,
            registrable = EXCLUDED.registrable, structure = EXCLUDED.structure, validation_rules = EXCLUDED.validation_rules,
            examples = EXCLUDED.examples
      WHERE (identifier_schemes.scheme_id, identifier_schemes.scheme_name, identifier_schemes.country, identifier_schemes.issuing_agency,
             identifier_schemes.state, identifier_schemes.removal_date, identifier_schemes.registrable, identifier_schemes.structure,
             identifier_schemes.validation_rules, identifier_schemes.examples)
            IS DISTINCT FROM (EXCLUDED.scheme_id, EXCLUDED.scheme_name, EXCLUDED.country, EXCLUDED.issuing_agency, EXCLUDED.state,
             EXCLUDED.removal_date, EXCLUDED.registrable, EXCLUDED.structure, EXCLUDED.validation_rules, EXCLUDED.examples)`,
    [
      column('icd'),
      column('schemeId'),
      column('schemeName'),
      column('country'),
      column('issuingAgency'),
      column('state'),
      column('removalDate'),
      column('registrable'),
      column('structure'),
      column('validationRules'),
      entries.map((entry) => JSON.stringify(entry.examples)),
    ],
  );
  const described = rows.map((row) => schemeChangeOf(row.before as SchemeRow | null, row.after as SchemeRow));
  return { identifierSchemes: changes(entries.length, rows), schemeChanges: described.sort() };
}

/** One scheme's change in the load report's words. */
function schemeChangeOf(before: SchemeRow | null, after: SchemeRow): string {
  const removal = (row: SchemeRow) => (row.removal_date === null ? '' : `, removed on ${row.removal_date}`);
  if (before === null) return `${after.icd} added: ${after.scheme_name} (${after.state}${removal(after)})`;
  const differences: string[] = [];
  if (before.state !== after.state) differences.push(`state ${before.state} → ${after.state}`);
  if (before.removal_date !== after.removal_date)
    differences.push(`removal date ${before.removal_date ?? 'none'} → ${after.removal_date ?? 'none'}`);
  if (before.validation_rules !== after.validation_rules) differences.push('validation rules changed');
  if (before.scheme_name !== after.scheme_name) differences.push(`name ${before.scheme_name} → ${after.scheme_name}`);
  return `${after.icd}: ${differences.length > 0 ? differences.join(', ') : 'details changed'}`;
}

/**
 * Each loaded document type ends up linked to exactly the processes its entry names; each one whose links
 * changed gets a change-log entry with its process ids before and after (the catalogue cache hears of it so).
 */
async function replaceLinks(tx: Queryable, catalogue: Catalogue, actor: Actor, before: DocumentTypeLinks[]) {
  const pairs = catalogue.documentTypes.flatMap((documentType) =>
    documentType.processes.map((process) => ({ documentType, process })),
  );
  const loaded = loadedKeys(catalogue);
  const wanted = [
    pairs.map((pair) => pair.documentType.scheme),
    pairs.map((pair) => pair.documentType.value),
    pairs.map((pair) => pair.process.scheme),
    pairs.map((pair) => pair.process.value),
  ];
  const wantedLinks = `SELECT d.id AS document_type_id, p.id AS process_id, w.process_scheme, w.process_value,
                              w.document_type_scheme, w.document_type_value
                         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
                              AS w(document_type_scheme, document_type_value, process_scheme, process_value)
                         JOIN document_types d ON d.scheme = w.document_type_scheme AND d.value = w.document_type_value
                         LEFT JOIN processes p ON p.scheme = w.process_scheme AND p.value = w.process_value`;
  const removed = await tx.query(
    `DELETE FROM process_document_types pdt
      USING document_types d, unnest($5::text[], $6::text[]) AS l(scheme, value)
      WHERE pdt.document_type_id = d.id AND d.scheme = l.scheme AND d.value = l.value
        AND NOT EXISTS (SELECT 1 FROM (${wantedLinks}) w
                         WHERE w.document_type_id = pdt.document_type_id AND w.process_id = pdt.process_id)
     RETURNING 1`,
    [...wanted, ...loaded],
  );
  const added = await tx.query(
    `INSERT INTO process_document_types (process_id, document_type_id)
     SELECT process_id, document_type_id FROM (${wantedLinks}) w WHERE process_id IS NOT NULL
     ON CONFLICT DO NOTHING RETURNING 1`,
    wanted,
  );
  if (removed.length + added.length > 0) await logLinkChanges(tx, actor, before, await processLinksOf(tx, loaded));
  const unknown = await tx.query<{ process: string; documentType: string }>(
    `SELECT DISTINCT process_scheme || '::' || process_value AS process,
            document_type_scheme || '::' || document_type_value AS "documentType"
       FROM (${wantedLinks}) w WHERE process_id IS NULL ORDER BY 1, 2`,
    wanted,
  );
  const warnings = unknown.map(
    (link) =>
      `document type ${link.documentType} names process ${link.process}, which is not in the catalogue: link skipped`,
  );
  return { links: { added: added.length, removed: removed.length }, warnings };
}

interface DocumentTypeLinks {
  id: string;
  processIds: string[];
}

/** The schemes and values of the loaded document types, as two query parameters. */
const loadedKeys = (catalogue: Catalogue) => [
  catalogue.documentTypes.map((entry) => entry.scheme),
  catalogue.documentTypes.map((entry) => entry.value),
];

/** The process ids each document type `loaded` (schemes and values) is linked to, in id order. */
async function processLinksOf(tx: Queryable, loaded: unknown[]): Promise<DocumentTypeLinks[]> {
  return tx.query<DocumentTypeLinks>(
    `SELECT d.id, ARRAY(SELECT pdt.process_id::text FROM process_document_types pdt
                         WHERE pdt.document_type_id = d.id ORDER BY pdt.process_id) AS "processIds"
       FROM document_types d JOIN unnest($1::text[], $2::text[]) AS l(scheme, value) ON d.scheme = l.scheme AND d.value = l.value`,
    loaded,
  );
}

async function logLinkChanges(tx: Queryable, actor: Actor, before: DocumentTypeLinks[], after: DocumentTypeLinks[]) {
  const previous = new Map(before.map((links) => [links.id, links.processIds]));
  const changed = after.filter(
    (links) => previous.has(links.id) && previous.get(links.id)?.join() !== links.processIds.join(),
  );
  await appendChange(
    tx,
    actor,
    changed.map((links) => ({
      resource: 'document-type' as const,
      identifier: links.id,
      operation: 'update' as const,
      before: { id: links.id, processIds: previous.get(links.id) ?? [] },
      after: links,
    })),
  );
}

/** The code-list versions the catalogue was loaded from. */
export async function catalogueSources(db: Queryable): Promise<Array<CatalogueSource & { loadedAt: string }>> {
  return db.query(
    `SELECT list, version, ${utcInstant('loaded_at')} AS "loadedAt"
       FROM catalogue_sources ORDER BY list`,
  );
}

export async function transportProfileIdOf(db: Queryable, value: string): Promise<string | undefined> {
  const [row] = await db.query<{ id: string }>('SELECT id FROM transport_profiles WHERE value = $1', [value]);
  return row?.id;
}
