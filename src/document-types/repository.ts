import { onForeignKeyViolation, onUniqueViolation, type Queryable } from '../db/database.js';
import { insertedId } from '../db/rows.js';
import { ConflictError, NotFoundError } from '../core/errors.js';
import type { CatalogueTable } from '../db/catalogue-table.js';
import { formatQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import { processSummaryJson, removedFromOf, removedFromParams, removedFromSet } from '../processes/repository.js';

/** Document types, as their routes read them and the catalogue cache holds them: they show their processes. */
export const DOCUMENT_TYPE_TABLE: CatalogueTable<'document-type'> = {
  kind: 'document-type',
  select: `
  d.id AS identifier, d.scheme || '::' || d.value AS "qualifiedIdentifier", d.title, d.visible, ${removedFromOf('d')} AS "removedFrom",
  (SELECT coalesce(json_agg(${processSummaryJson('p')} ORDER BY p.value, p.id), '[]')
     FROM process_document_types pdt JOIN processes p ON p.id = pdt.process_id
    WHERE pdt.document_type_id = d.id) AS processes`,
  from: 'document_types d',
  id: 'd.id',
  sortable: {
    identifier: 'd.id',
    qualifiedIdentifier: "d.scheme || '::' || d.value",
    'qualifiedIdentifier.scheme': 'd.scheme',
    'qualifiedIdentifier.value': 'd.value',
    title: 'd.title',
    visible: 'd.visible',
  },
  builtFrom: ['document-type', 'process'],
};

export interface DocumentTypeRecord {
  qualifiedIdentifier: QualifiedIdentifier;
  title: string;
  visible: boolean;
  /** Undefined: absent from the form, the one set stays; null: cleared. */
  removedFrom?: string | null;
  processIds: string[];
}

const duplicate =
  ({ qualifiedIdentifier }: DocumentTypeRecord) =>
  () =>
    new ConflictError(
      `A document type with qualified identifier '${formatQualifiedIdentifier(qualifiedIdentifier)}' already exists`,
    );

export async function insertDocumentType(tx: Queryable, record: DocumentTypeRecord): Promise<string> {
  const id = await insertedId(
    onUniqueViolation(
      tx.query<{ id: string }>(
        `INSERT INTO document_types (scheme, value, title, visible, removed_from)
     VALUES ($1, $2, $3, $4, date_trunc('second', $5::timestamptz)) RETURNING id`,
        [
          record.qualifiedIdentifier.scheme,
          record.qualifiedIdentifier.value,
          record.title,
          record.visible,
          record.removedFrom ?? null,
        ],
      ),
      duplicate(record),
    ),
  );
  await replaceProcessLinks(tx, id, record.processIds);
  return id;
}

export async function updateDocumentType(tx: Queryable, id: string, record: DocumentTypeRecord): Promise<void> {
  const updated = await onUniqueViolation(
    tx.query(
      `UPDATE document_types SET scheme = $2, value = $3, title = $4, visible = $5, ${removedFromSet('$6', '$7')} WHERE id = $1 RETURNING id`,
      [
        id,
        record.qualifiedIdentifier.scheme,
        record.qualifiedIdentifier.value,
        record.title,
        record.visible,
        ...removedFromParams(record.removedFrom),
      ],
    ),
    duplicate(record),
  );
  if (updated.length === 0) throw NotFoundError.instance(id);
  await replaceProcessLinks(tx, id, record.processIds);
}

/** The links live in `process_document_types`, the table the processes side edits too, so both sides agree. */
async function replaceProcessLinks(tx: Queryable, id: string, processIds: string[]): Promise<void> {
  await tx.query('DELETE FROM process_document_types WHERE document_type_id = $1', [id]);
  await onForeignKeyViolation(
    tx.query('INSERT INTO process_document_types (process_id, document_type_id) SELECT unnest($2::uuid[]), $1', [
      id,
      processIds,
    ]),
    () => new ConflictError('A process named in processes was deleted meanwhile; nothing was changed'),
  );
}

/**
 * Deletes a document type that no participant uses; participants use it through the processes they have.
 * Its links to processes go with it.
 */
export async function deleteDocumentType(tx: Queryable, id: string): Promise<void> {
  const [locked] = await tx.query<{ title: string }>('SELECT title FROM document_types WHERE id = $1 FOR UPDATE', [id]);
  if (!locked) throw NotFoundError.instance(id);
  // Locking the linked processes makes a participant that takes one of them meanwhile finish first (and be
  // counted below) or wait until the links are gone.
  await tx.query(
    'SELECT 1 FROM processes WHERE id IN (SELECT process_id FROM process_document_types WHERE document_type_id = $1) FOR UPDATE',
    [id],
  );
  const [usage] = await tx.query<{ participants: number; processes: string[] }>(
    `SELECT count(DISTINCT pp.participant_id)::int AS participants,
            coalesce(array_agg(DISTINCT p.title || ' (' || p.scheme || '::' || p.value || ')'), '{}') AS processes
       FROM process_document_types pdt
       JOIN participant_processes pp ON pp.process_id = pdt.process_id
       JOIN processes p ON p.id = pdt.process_id
      WHERE pdt.document_type_id = $1`,
    [id],
  );
  if (usage && usage.participants > 0) {
    throw new ConflictError(
      `Document type '${locked.title}' is still used by ${usage.participants} participant(s) through the processes ${usage.processes.join(', ')}`,
    );
  }
  await tx.query('DELETE FROM document_types WHERE id = $1', [id]);
}
