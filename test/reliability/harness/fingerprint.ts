import type { Database } from '../../../src/db/database.js';

/**
 * A cheap fingerprint of every table of the current schema: row count and a hash of all rows. Equal before
 * and after a refused request means the request changed nothing, not even half of something.
 */
export async function fingerprintOf(db: Database): Promise<string> {
  const tables = await db.query<{ name: string }>(
    `SELECT quote_ident(table_name) AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const parts = tables.map(({ name }) =>
    `SELECT '${name}' || ':' || count(*) || ':' || coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') AS part FROM ${name} t`);
  const [row] = await db.query<{ fingerprint: string }>(`SELECT string_agg(part, '|') AS fingerprint FROM (${parts.join(' UNION ALL ')}) parts`);
  return row?.fingerprint ?? '';
}
