import type { FieldErrorInput } from '../http/errors.js';
import { parseQualifiedIdentifier, type Reference } from '../http/schemas.js';
import type { Queryable } from './database.js';

export interface ReferenceTarget {
  /** The table holding the referenced rows: `processes`, `document_types`, `capabilities`. */
  table: 'processes' | 'document_types' | 'capabilities';
  /** How the resource is named in messages. */
  noun: string;
  /** The reference object's type in message codes, such as `ProcessIdentifiable`. */
  typeName: string;
}

export const PROCESS_REFERENCE: ReferenceTarget = { table: 'processes', noun: 'process', typeName: 'ProcessIdentifiable' };
export const DOCUMENT_TYPE_REFERENCE: ReferenceTarget = { table: 'document_types', noun: 'document type', typeName: 'DocumentTypeIdentifiable' };
export const CAPABILITY_REFERENCE: ReferenceTarget = { table: 'capabilities', noun: 'capability', typeName: 'CapabilityIdentifiable' };

export interface Resolved {
  ids: string[];
  errors: Omit<FieldErrorInput, 'objectName'>[];
}

/**
 * Resolves reference objects of a request body by `identifier`, else by `qualifiedIdentifier`, in one query.
 * Each reference that names nothing known becomes a `NotFound` error at its field path.
 */
export async function resolveReferences(
  db: Queryable,
  target: ReferenceTarget,
  references: readonly Reference[],
  field: string,
): Promise<Resolved> {
  if (references.length === 0) return { ids: [], errors: [] };
  const keys = references.map((reference) => {
    const qualified = reference.identifier || reference.qualifiedIdentifier === undefined
      ? undefined
      : parseQualifiedIdentifier(reference.qualifiedIdentifier);
    return { identifier: reference.identifier ?? null, scheme: qualified?.scheme ?? null, value: qualified?.value ?? null };
  });
  const byQualifiedIdentifier = target.table === 'capabilities'
    ? 'false'
    : 'r.identifier IS NULL AND t.scheme = r.scheme AND t.value = r.value';
  const rows = await db.query<{ position: number; id: string | null }>(
    `SELECT r.position::int AS position, t.id
       FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS r(identifier, scheme, value, position)
       LEFT JOIN ${target.table} t ON t.id = r.identifier OR (${byQualifiedIdentifier})
      ORDER BY r.position`,
    [keys.map((key) => key.identifier), keys.map((key) => key.scheme), keys.map((key) => key.value)],
  );
  const ids: string[] = [];
  const errors: Resolved['errors'] = [];
  for (const row of rows) {
    const index = row.position - 1;
    if (row.id) {
      if (!ids.includes(row.id)) ids.push(row.id);
      continue;
    }
    const reference = references[index] as Reference;
    const named = reference.identifier ?? (typeof reference.qualifiedIdentifier === 'object'
      ? `${reference.qualifiedIdentifier.scheme}::${reference.qualifiedIdentifier.value}`
      : reference.qualifiedIdentifier);
    errors.push({
      field: `${field}[${index}]`,
      code: 'NotFound',
      rejectedValue: reference,
      typeName: target.typeName,
      defaultMessage: named ? `no ${target.noun} with identifier '${named}'` : `names no ${target.noun}: give identifier or qualifiedIdentifier`,
    });
  }
  return { ids, errors };
}
