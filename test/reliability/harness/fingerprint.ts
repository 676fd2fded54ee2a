import type { Database } from '../../../src/db/database.js';

/**
 * A cheap fingerprint of every table of the current schema: row count and a hash of all rows. Equal before
 * and after a refused request means the request changed nothing, not even half of something.
 *
 * Each row's text is hashed on its own (64 bits) and the hashes summed, so that no table is sorted and no row text
 * concatenated: per table, what the fuzzer's thousands of fingerprints cost is one scan. The statement is made once
 * per database (its schema's tables are those the migrations made): listing them took as long as hashing them.
 */
export async function fingerprintOf(db: Database): Promise<string> {
  let statement = statements.get(db);
  if (!statement) {
    statement = fingerprintStatement(db);
    statements.set(db, statement);
  }
  const [row] = await db.query<{ fingerprint: string }>(await statement);
  return row?.fingerprint ?? '';
}

const statements = new WeakMap<Database, Promise<string>>();

async function fingerprintStatement(db: Database): Promise<string> {
  const tables = await db.query<{ name: string }>(
    `SELECT quote_ident(table_name) AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const parts = tables.map(
    ({ name }) =>
      `SELECT '${name}' || ':' || count(*) || ':' || coalesce(sum(hashtextextended(t::text, 0)), 0) AS part FROM ${name} t`,
  );
  return `SELECT string_agg(part, '|' ORDER BY part) AS fingerprint FROM (${parts.join(' UNION ALL ')}) parts`;
}
