import { buildApp, type SmpOptions } from '../src/app.js';
import { singleReads } from '../src/db/batched-reads.js';
import type { Database, Queryable, Row } from '../src/db/database.js';
import type { BenchRequest, Binding, Draw } from './scenarios.js';

/** One statement the service sent, with what it returned (to chain generated ids in pgbench). */
export interface Recorded {
  sql: string;
  params: readonly unknown[];
  rows: Row[];
}

/** A cursor read: pgbench replays it as DECLARE and enough FETCHes for `expectedRows`. */
export interface RecordedStream {
  sql: string;
  params: readonly unknown[];
  batchSize: number;
}

/**
 * Wraps a database so that every statement of a request is recorded. Streams are recorded, not run: the
 * recorder's response is an empty array, and pgbench replays the cursor on its own.
 */
export function recordingDatabase(db: Database) {
  const statements: Recorded[] = [];
  const streams: RecordedStream[] = [];
  const recording = (target: Queryable): Queryable => {
    const query = async <T = Row>(sql: string, params: readonly unknown[] = []) => {
      const rows = await target.query<T>(sql, params);
      statements.push({ sql, params, rows: rows as Row[] });
      return rows;
    };
    // Each read alone: the least work answers one request by itself.
    return { query, readOne: singleReads(query), runScript: (sql) => target.runScript(sql) };
  };
  const recorder: Database = {
    ...recording(db),
    kind: db.kind,
    connections: db.connections,
    listen: (channel, onSignal) => db.listen(channel, onSignal),
    async transaction(work) {
      statements.push({ sql: 'BEGIN', params: [], rows: [] });
      const result = await db.transaction((tx) => work(recording(tx)));
      statements.push({ sql: 'COMMIT', params: [], rows: [] });
      return result;
    },
    // eslint-disable-next-line require-yield
    async *stream(sql, params = [], batchSize = 1000) {
      streams.push({ sql, params, batchSize });
    },
    close: () => db.close(),
  };
  return {
    db: recorder,
    take() {
      const taken = { statements: statements.splice(0), streams: streams.splice(0) };
      return taken;
    },
  };
}

/** The service in-process over a recording database, to capture the SQL that one request runs. */
export async function recordingApp(db: Database, smp?: SmpOptions) {
  const recorder = recordingDatabase(db);
  const app = await buildApp({ db: recorder.db, logger: false, smp });
  await app.ready();
  const send = (request: BenchRequest) =>
    app.inject({ method: request.method, url: request.path, headers: request.headers, payload: request.body });
  return {
    /** Sends the draw's requests twice (the first warms the credential cache) and records the second. */
    async record(draw: Draw) {
      for (const request of draw.requests) await send(request);
      recorder.take();
      for (const request of draw.requests) {
        const response = await send(request);
        if (response.statusCode >= 300)
          throw new Error(`${request.method} ${request.path}: ${response.statusCode} ${response.body.slice(0, 300)}`);
      }
      return recorder.take();
    },
    close: () => app.close(),
  };
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) {
    return literal(
      `{${value.map((item) => (item === null ? 'NULL' : `"${String(item).replace(/["\\]/g, '\\$&')}"`)).join(',')}}`,
    );
  }
  if (value instanceof Date) return literal(value.toISOString());
  if (typeof value === 'object') return literal(JSON.stringify(value));
  const text = String(value);
  // pgbench reads `:name` anywhere in a statement as one of its variables, inside literals too: a string with
  // a colon is written as an escape string with the colon as \x3a, which PostgreSQL reads back unchanged.
  if (text.includes(':')) return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''").replace(/:/g, '\\x3a')}'`;
  return `'${text.replace(/'/g, "''")}'`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const sameValue = (a: unknown, b: unknown) =>
  a === b || (a !== null && typeof a === 'object' && JSON.stringify(a) === JSON.stringify(b));

/**
 * The recorded statements as a pgbench script: each parameter becomes the binding's expression when it is
 * one of the request's random keys, a `\gset` variable when an earlier statement returned it (a generated
 * id), else a literal.
 */
export function pgbenchScript(variables: string[], statements: Recorded[], bindings: Binding[]): string {
  const lines = [...variables];
  const returned: { value: unknown; variable: string }[] = [];
  const needsGset = new Set<number>();
  const body = statements.map((statement, index) => {
    const sql = statement.sql.replace(/\$(\d+)/g, (_, position: string) => {
      const value = statement.params[Number(position) - 1];
      const binding = bindings.find((candidate) => sameValue(candidate.value, value));
      if (binding) return `(${binding.sql})`;
      const earlier = returned.find((candidate) => sameValue(candidate.value, value));
      if (earlier) {
        needsGset.add(Number(earlier.variable.split('_')[1]));
        return `:${earlier.variable}`;
      }
      return literal(value);
    });
    const [row] = statement.rows;
    if (statement.rows.length === 1 && row) {
      for (const [column, value] of Object.entries(row)) {
        if (typeof value === 'string' && UUID.test(value) && /^\w+$/.test(column))
          returned.push({ value, variable: `r_${index}_${column}` });
      }
    }
    return sql;
  });
  body.forEach((sql, index) =>
    lines.push(needsGset.has(index) ? `${sql.trim()} \\gset r_${index}_` : `${sql.trim()};`),
  );
  return `${lines.join('\n')}\n`;
}

/** A cursor read of every row, as the service's stream does it. */
export function pgbenchStreamScript(stream: RecordedStream, expectedRows: number): string {
  const sql = stream.sql.replace(/\$(\d+)/g, (_, position: string) => literal(stream.params[Number(position) - 1]));
  const fetches = Math.ceil(expectedRows / stream.batchSize) + 1;
  return [
    'BEGIN READ ONLY;',
    `DECLARE registry_stream NO SCROLL CURSOR FOR ${sql.trim()};`,
    ...Array.from({ length: fetches }, () => `FETCH ${stream.batchSize} FROM registry_stream;`),
    'COMMIT;',
  ].join('\n');
}
