import { ConflictError, NotFoundError } from '../core/errors.js';
import type { Queryable } from './database.js';

/** Something that may still use a row: a count over `$1`, the row's id, and what it counts. */
export interface Usage {
  count: string;
  noun: string;
}

/** Locks the row `id` of `table` for a change in this transaction; 404 when there is none. */
export async function lockRow(tx: Queryable, table: string, id: string): Promise<void> {
  const locked = await tx.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
  if (locked.length === 0) throw NotFoundError.instance(id);
}

/**
 * Deletes the row `id` of `table` (which has a `title`) unless something still uses it: 404 when there is no such
 * row, 409 naming it by its title and every remaining use. The row lock makes a writer that starts to reference
 * the row meanwhile (its foreign key check takes a key-share lock) wait for the delete, and fail after it.
 */
export async function deleteUnused(
  tx: Queryable,
  table: string,
  noun: string,
  id: string,
  usages: readonly Usage[],
): Promise<void> {
  await lockRow(tx, table, id);
  const [row] = await tx.query<{ title: string; counts: number[] }>(
    `SELECT title, json_build_array(${usages.map((usage) => `(${usage.count})`).join(', ')}) AS counts FROM ${table} WHERE id = $1`,
    [id],
  );
  const uses = usages.flatMap((usage, index) => {
    const count = Number(row?.counts[index] ?? 0);
    return count > 0 ? [`${count} ${usage.noun}`] : [];
  });
  if (uses.length > 0)
    throw new ConflictError(`The ${noun} '${row?.title ?? id}' is still used by ${uses.join(' and ')}`);
  await tx.query(`DELETE FROM ${table} WHERE id = $1`, [id]);
}

/** `{identifier, title}` of the row `alias` of an outer join, or null when the join found none. */
export const optionalSummaryJson = (alias: string) =>
  `CASE WHEN ${alias}.id IS NULL THEN NULL ELSE json_build_object('identifier', ${alias}.id, 'title', ${alias}.title) END`;

/** The conflict of a write that links a row which another request deleted after the form was checked. */
export const deletedMeanwhile = (field: string) => () =>
  new ConflictError(`A resource named in ${field} was deleted meanwhile; nothing was changed`);

/** The row an `INSERT ... RETURNING` of one row inserted. */
export async function insertedRow<Row>(insert: Promise<readonly Row[]>): Promise<Row> {
  const [row] = await insert;
  if (!row) throw new Error('An INSERT of one row returned none');
  return row;
}

/** The id of the row an `INSERT ... RETURNING id` of one row inserted. */
export async function insertedId(insert: Promise<readonly { id: string }[]>): Promise<string> {
  return (await insertedRow(insert)).id;
}
