import {
  onForeignKeyViolation,
  onUniqueViolation,
  STREAM_BATCH_MAX_BYTES,
  type Database,
  type Queryable,
} from '../db/database.js';
import { Conditions, escapeLikeWildcards, selectPage, utcInstant } from '../db/sql.js';
import { ConflictError, NotFoundError } from '../core/errors.js';
import type { CatalogueTable } from '../db/catalogue-table.js';
import type { ReferenceInput } from '../db/references.js';
import type { PageRequest } from '../core/paging.js';
import { formatQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import type { Process, ProcessFilter } from './schemas.js';

/** A process's or document type's `removedFrom`, to the second in UTC (as it is stored). */
export const removedFromOf = (alias: string) => utcInstant(`${alias}.removed_from`);

/** A form's `removedFrom` as an UPDATE sets it: absent (`$keep` true) keeps the one set, else the given instant or none. */
export const removedFromSet = (keep: string, instant: string) =>
  `removed_from = CASE WHEN ${keep}::boolean THEN removed_from ELSE date_trunc('second', ${instant}::timestamptz) END`;

/** The parameters of `removedFromSet`, from a record's `removedFrom` (undefined: absent from the form; null: cleared). */
export const removedFromParams = (removedFrom: string | null | undefined) => [
  removedFrom === undefined,
  removedFrom ?? null,
];

/** The JSON of a process's summary, as listed in dependencies and in a document type's processes. */
export const processSummaryJson = (alias: string) =>
  `json_build_object('identifier', ${alias}.id, 'qualifiedIdentifier', ${alias}.scheme || '::' || ${alias}.value,
     'title', ${alias}.title, 'restricted', ${alias}.restricted, 'visible', ${alias}.visible, 'removedFrom', ${removedFromOf(alias)})`;

/** The SELECT list of a process response, for a query over `processes p`; participants and organizations list their processes with it. */
export const PROCESS_RESPONSE_COLUMNS = `
  p.id AS identifier, p.scheme || '::' || p.value AS "qualifiedIdentifier", p.domain, p.title, p.alias,
  p.restricted, p.visible, ${removedFromOf('p')} AS "removedFrom",
  (SELECT coalesce(json_agg(json_build_object('identifier', c.id, 'title', c.title) ORDER BY c.title, c.id), '[]')
     FROM process_capabilities pc JOIN capabilities c ON c.id = pc.capability_id
    WHERE pc.process_id = p.id) AS capabilities,
  (SELECT coalesce(json_agg(json_build_object('identifier', d.id, 'qualifiedIdentifier', d.scheme || '::' || d.value,
                                              'title', d.title, 'visible', d.visible, 'removedFrom', ${removedFromOf('d')})
                        ORDER BY d.value, d.id), '[]')
     FROM process_document_types pdt JOIN document_types d ON d.id = pdt.document_type_id
    WHERE pdt.process_id = p.id) AS "documentTypes",
  (SELECT coalesce(json_agg(${processSummaryJson('dep')} ORDER BY dep.value, dep.id), '[]')
     FROM process_dependencies pd JOIN processes dep ON dep.id = pd.dependency_id
    WHERE pd.process_id = p.id) AS dependencies,
  to_json(p.required_icds) AS "requiredICDs"`;

/**
 * Processes, as their routes read them and the catalogue cache holds them: they show their capabilities, document
 * types and dependencies. A find with filters is `findProcesses`.
 */
export const PROCESS_TABLE: CatalogueTable<'process'> = {
  kind: 'process',
  select: PROCESS_RESPONSE_COLUMNS,
  from: 'processes p',
  id: 'p.id',
  sortable: {
    identifier: 'p.id',
    qualifiedIdentifier: "p.scheme || '::' || p.value",
    'qualifiedIdentifier.scheme': 'p.scheme',
    'qualifiedIdentifier.value': 'p.value',
    domain: 'p.domain',
    title: 'p.title',
    alias: 'p.alias',
    restricted: 'p.restricted',
    visible: 'p.visible',
  },
  builtFrom: ['process', 'document-type', 'capability'],
};

/** A linked resource named by identifier or qualified identifier (the `documentType`/`dependency` filters). */
const namedBy = (alias: string, placeholder: string) =>
  `(${alias}.id::text = ${placeholder} OR ${alias}.scheme || '::' || ${alias}.value = ${placeholder})`;

function filterConditions(filter: ProcessFilter): Conditions {
  const conditions = new Conditions();
  const text = filter.query ?? filter.search;
  if (text) {
    const pattern = conditions.param(`%${escapeLikeWildcards(text)}%`);
    conditions.where(
      `(p.title ILIKE ${pattern} OR p.alias ILIKE ${pattern} OR p.scheme || '::' || p.value ILIKE ${pattern})`,
    );
  }
  if (filter.domain?.length) conditions.where(`p.domain = ANY(${conditions.param(filter.domain)}::text[])`);
  if (filter.requiredIcd?.length)
    conditions.where(`p.required_icds && ${conditions.param(filter.requiredIcd)}::text[]`);
  if (filter.restricted !== undefined) conditions.where(`p.restricted = ${conditions.param(filter.restricted)}`);
  if (filter.visible !== undefined) conditions.where(`p.visible = ${conditions.param(filter.visible)}`);
  if (filter.documentType) {
    conditions.where(`EXISTS (SELECT 1 FROM process_document_types pdt JOIN document_types d ON d.id = pdt.document_type_id
                               WHERE pdt.process_id = p.id AND ${namedBy('d', conditions.param(filter.documentType))})`);
  }
  if (filter.dependency) {
    conditions.where(`EXISTS (SELECT 1 FROM process_dependencies pd JOIN processes dep ON dep.id = pd.dependency_id
                               WHERE pd.process_id = p.id AND ${namedBy('dep', conditions.param(filter.dependency))})`);
  }
  return conditions;
}

export async function findProcesses(db: Queryable, filter: ProcessFilter, page: PageRequest) {
  return selectPage<Process>(db, {
    select: PROCESS_TABLE.select,
    from: PROCESS_TABLE.from,
    conditions: filterConditions(filter),
    page,
  });
}

/** Every hit, in batches that also stop at `maxBytes`: a process grows with its document types and dependencies. */
export function streamProcesses(
  db: Database,
  filter: ProcessFilter,
  orderBy: string,
  maxBytes = STREAM_BATCH_MAX_BYTES,
) {
  const conditions = filterConditions(filter);
  return db.stream<Process>(
    `SELECT ${PROCESS_RESPONSE_COLUMNS} FROM processes p ${conditions.clause} ${orderBy}`,
    conditions.params,
    undefined,
    maxBytes,
  );
}

/** Where the processes of a participant or organization are filled in from: the catalogue cache, or the database. */
export interface ProcessSource {
  /** The processes `ids` name, in qualified identifier order. */
  processesIn(ids: readonly string[]): Promise<Process[]>;
}

/** The processes the catalogue cache holds, each read through `db` (a transaction passes itself): what participant writes need of it. */
export interface HeldProcesses {
  /** The processes `ids` name, in qualified identifier order. */
  processesIn(ids: readonly string[], db: Queryable): Promise<Process[]>;
  /** The ids of the processes `references` name when every one is held; else undefined. */
  processIdsOf(references: readonly ReferenceInput[], db: Queryable): Promise<string[] | undefined>;
}

/** The processes read in `db` (a transaction sees its own writes): for callers without the catalogue cache. */
export const processesFromDatabase = (db: Queryable): ProcessSource => ({
  processesIn: async (ids) =>
    ids.length === 0
      ? []
      : db.query<Process>(
          `SELECT ${PROCESS_RESPONSE_COLUMNS} FROM processes p WHERE p.id = ANY($1::uuid[]) ORDER BY p.scheme || '::' || p.value, p.id`,
          [ids],
        ),
});

/** The processes named by identifier or by qualified identifier (`scheme::value`), in `processesIn`'s order: a batch's references at once. */
export const processesNamed = async (
  db: Queryable,
  ids: readonly string[],
  names: readonly string[],
): Promise<Process[]> =>
  ids.length + names.length === 0
    ? []
    : db.query<Process>(
        `SELECT ${PROCESS_RESPONSE_COLUMNS} FROM processes p
      WHERE p.id = ANY($1::uuid[]) OR p.scheme || '::' || p.value = ANY($2::text[])
      ORDER BY p.scheme || '::' || p.value, p.id`,
        [ids, names],
      );

export interface ProcessRecord {
  qualifiedIdentifier: QualifiedIdentifier;
  domain: string;
  title: string;
  alias: string | null;
  restricted: boolean;
  visible: boolean;
  /** Undefined: absent from the form, the one set stays; null: cleared. */
  removedFrom?: string | null;
  requiredICDs: string[];
  capabilityIds: string[];
  documentTypeIds: string[];
  dependencyIds: string[];
}

function duplicate(record: ProcessRecord): ConflictError {
  return new ConflictError(
    `A process with qualified identifier '${formatQualifiedIdentifier(record.qualifiedIdentifier)}' already exists`,
  );
}

export async function insertProcess(tx: Queryable, record: ProcessRecord): Promise<string> {
  const [row] = await tx.query<{ id: string }>(
    `INSERT INTO processes (scheme, value, domain, title, alias, restricted, visible, required_icds, removed_from)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, date_trunc('second', $9::timestamptz)) ON CONFLICT (scheme, value) DO NOTHING RETURNING id`,
    [
      record.qualifiedIdentifier.scheme,
      record.qualifiedIdentifier.value,
      record.domain,
      record.title,
      record.alias,
      record.restricted,
      record.visible,
      record.requiredICDs,
      record.removedFrom ?? null,
    ],
  );
  if (!row) throw duplicate(record);
  await replaceLinks(tx, row.id, record);
  return row.id;
}

export async function updateProcess(tx: Queryable, id: string, record: ProcessRecord): Promise<void> {
  const [clash] = await tx.query('SELECT 1 FROM processes WHERE scheme = $1 AND value = $2 AND id <> $3', [
    record.qualifiedIdentifier.scheme,
    record.qualifiedIdentifier.value,
    id,
  ]);
  if (clash) throw duplicate(record);
  const updated = await onUniqueViolation(
    tx.query(
      `UPDATE processes SET scheme = $2, value = $3, domain = $4, title = $5, alias = $6, restricted = $7, visible = $8,
            required_icds = $9, ${removedFromSet('$10', '$11')}
      WHERE id = $1 RETURNING id`,
      [
        id,
        record.qualifiedIdentifier.scheme,
        record.qualifiedIdentifier.value,
        record.domain,
        record.title,
        record.alias,
        record.restricted,
        record.visible,
        record.requiredICDs,
        ...removedFromParams(record.removedFrom),
      ],
    ),
    () => duplicate(record),
  );
  if (updated.length === 0) throw NotFoundError.instance(id);
  await replaceLinks(tx, id, record);
}

async function replaceLinks(tx: Queryable, id: string, record: ProcessRecord): Promise<void> {
  await tx.query('DELETE FROM process_capabilities WHERE process_id = $1', [id]);
  await tx.query('DELETE FROM process_document_types WHERE process_id = $1', [id]);
  await tx.query('DELETE FROM process_dependencies WHERE process_id = $1', [id]);
  const deletedMeanwhile = (field: string) => () =>
    new ConflictError(`A resource named in ${field} was deleted meanwhile; nothing was changed`);
  await onForeignKeyViolation(
    tx.query('INSERT INTO process_capabilities SELECT $1, unnest($2::uuid[])', [id, record.capabilityIds]),
    deletedMeanwhile('capabilities'),
  );
  await onForeignKeyViolation(
    tx.query('INSERT INTO process_document_types SELECT $1, unnest($2::uuid[])', [id, record.documentTypeIds]),
    deletedMeanwhile('documentTypes'),
  );
  await onForeignKeyViolation(
    tx.query('INSERT INTO process_dependencies SELECT $1, unnest($2::uuid[])', [id, record.dependencyIds]),
    deletedMeanwhile('dependencies'),
  );
}

/** Deletes a process nobody uses; 409 naming what still does. */
export async function deleteProcess(tx: Queryable, id: string): Promise<void> {
  // The row lock makes a participant that takes this process meanwhile wait for the delete, and fail after it.
  const [locked] = await tx.query<{ title: string }>('SELECT title FROM processes WHERE id = $1 FOR UPDATE', [id]);
  if (!locked) throw NotFoundError.instance(id);
  const [usage] = await tx.query<{ participants: number; dependents: string[] }>(
    `SELECT (SELECT count(*)::int FROM participant_processes WHERE process_id = $1) AS participants,
            (SELECT coalesce(array_agg(p.title || ' (' || p.scheme || '::' || p.value || ')' ORDER BY p.title, p.value), '{}')
               FROM process_dependencies pd JOIN processes p ON p.id = pd.process_id WHERE pd.dependency_id = $1) AS dependents`,
    [id],
  );
  if (!usage) throw NotFoundError.instance(id);
  const users = [
    ...(usage.participants > 0 ? [`${usage.participants} participant(s)`] : []),
    ...(usage.dependents.length > 0 ? [`the processes that depend on it (${usage.dependents.join(', ')})`] : []),
  ];
  if (users.length > 0) throw new ConflictError(`Process '${locked.title}' is still used by ${users.join(' and ')}`);
  await tx.query('DELETE FROM processes WHERE id = $1', [id]);
}
