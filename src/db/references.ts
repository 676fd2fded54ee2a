import type { FieldErrorInput } from '../core/errors.js';
import {
  formatQualifiedIdentifier,
  qualifiedIdentifierNamedBy,
  type QualifiedIdentifierInput,
} from '../core/schemas.js';
import type { Queryable } from './database.js';

export interface ReferenceTarget {
  /** The table holding the referenced rows. */
  table:
    | 'processes'
    | 'document_types'
    | 'capabilities'
    | 'service_providers'
    | 'access_point_providers'
    | 'access_points'
    | 'transport_profiles';
  /** How the resource is named in messages. */
  noun: string;
  /** The reference object's type in message codes, such as `ProcessIdentifiable`. */
  typeName: string;
  /** What names a row when `identifier` is absent: its qualified identifier, its unique `value`, or nothing. */
  alternateKey?: 'qualifiedIdentifier' | 'value';
}

export const PROCESS_REFERENCE: ReferenceTarget = {
  table: 'processes',
  noun: 'process',
  typeName: 'ProcessIdentifiable',
  alternateKey: 'qualifiedIdentifier',
};
export const DOCUMENT_TYPE_REFERENCE: ReferenceTarget = {
  table: 'document_types',
  noun: 'document type',
  typeName: 'DocumentTypeIdentifiable',
  alternateKey: 'qualifiedIdentifier',
};
export const CAPABILITY_REFERENCE: ReferenceTarget = {
  table: 'capabilities',
  noun: 'capability',
  typeName: 'CapabilityIdentifiable',
};
/** Here rather than in service-providers/: users name one, and so does a participant write (an MLS receiver's). */
export const SERVICE_PROVIDER_REFERENCE: ReferenceTarget = {
  table: 'service_providers',
  noun: 'service provider',
  typeName: 'ServiceProviderIdentifiable',
};

/** A reference object of a request body; which fields count depends on the target's `alternateKey`. */
export interface ReferenceInput {
  identifier?: string;
  qualifiedIdentifier?: QualifiedIdentifierInput;
  value?: string;
}

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
  references: readonly ReferenceInput[],
  field: string,
): Promise<Resolved> {
  const { ids, errors } = await resolveEach(db, target, references, (index) => `${field}[${index}]`);
  return { ids: [...new Set(ids.filter((id): id is string => id !== null))], errors };
}

/** Resolves one reference object (such as a user's `serviceProvider`); `id` is null when it names nothing. */
export async function resolveReference(
  db: Queryable,
  target: ReferenceTarget,
  reference: ReferenceInput,
  field: string,
): Promise<{ id: string | null; errors: Resolved['errors'] }> {
  const { ids, errors } = await resolveEach(db, target, [reference], () => field);
  return { id: ids[0] ?? null, errors };
}

/** Resolves each reference in order: `ids[i]` is the row of `references[i]`, or null with an error at `fieldAt(i)`. */
export async function resolveEach(
  db: Queryable,
  target: ReferenceTarget,
  references: readonly ReferenceInput[],
  fieldAt: (index: number) => string,
): Promise<{ ids: (string | null)[]; errors: Resolved['errors'] }> {
  if (references.length === 0) return { ids: [], errors: [] };
  const keys = references.map((reference) => keyOf(target, reference));
  const byAlternateKey = {
    qualifiedIdentifier: 'r.identifier IS NULL AND t.scheme = r.scheme AND t.value = r.value',
    value: 'r.identifier IS NULL AND t.value = r.value',
    none: 'false',
  }[target.alternateKey ?? 'none'];
  const rows = await db.query<{ position: number; id: string | null }>(
    `SELECT r.position::int AS position, t.id
       FROM unnest($1::uuid[], $2::text[], $3::text[]) WITH ORDINALITY AS r(identifier, scheme, value, position)
       LEFT JOIN ${target.table} t ON t.id = r.identifier OR (${byAlternateKey})
      ORDER BY r.position`,
    [keys.map((key) => key.identifier), keys.map((key) => key.scheme), keys.map((key) => key.value)],
  );
  const ids: (string | null)[] = [];
  const errors: Resolved['errors'] = [];
  for (const row of rows) {
    const index = row.position - 1;
    ids.push(row.id);
    if (row.id) continue;
    const reference = references[index] as ReferenceInput;
    const named = nameOf(reference);
    errors.push({
      field: fieldAt(index),
      code: 'NotFound',
      rejectedValue: reference,
      typeName: target.typeName,
      defaultMessage: named
        ? `no ${target.noun} with identifier '${named}'`
        : `names no ${target.noun}: give ${howToName(target)}`,
    });
  }
  return { ids, errors };
}

function keyOf(target: ReferenceTarget, reference: ReferenceInput) {
  const identifier = reference.identifier ?? null;
  if (identifier || target.alternateKey === undefined) return { identifier, scheme: null, value: null };
  if (target.alternateKey === 'value') return { identifier, scheme: null, value: reference.value ?? null };
  const qualified = qualifiedIdentifierNamedBy(reference);
  return { identifier, scheme: qualified?.scheme ?? null, value: qualified?.value ?? null };
}

function nameOf(reference: ReferenceInput): string | undefined {
  if (reference.identifier) return reference.identifier;
  if (typeof reference.qualifiedIdentifier === 'object')
    return formatQualifiedIdentifier(reference.qualifiedIdentifier);
  return reference.qualifiedIdentifier ?? reference.value;
}

function howToName(target: ReferenceTarget): string {
  return target.alternateKey ? `identifier or ${target.alternateKey}` : 'identifier';
}
