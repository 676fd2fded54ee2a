import DataLoader from 'dataloader';
import { isDatabaseUnreachable, type BatchableRead, type ReadOne, type Row } from './database.js';

const ORDINAL = 'batch_ordinal';

/** A read of one row at most that concurrent callers may share one statement for: `sql` with `$1`…`$n` of `types`. */
export function batchableRead(sql: string, types: readonly string[]): BatchableRead {
  const columns = types.map((_, index) => `p${index + 1}`);
  const arrays = types.map((type, index) => `$${index + 1}::${type}[]`);
  return {
    sql,
    batched: `SELECT k.${ORDINAL}::int AS ${ORDINAL}, r.*
                FROM unnest(${arrays.join(', ')}) WITH ORDINALITY AS k(${columns.join(', ')}, ${ORDINAL})
                CROSS JOIN LATERAL (${sql.replace(/\$(\d+)/g, 'k.p$1')}) r`,
  };
}

type Query = <T>(sql: string, params?: readonly unknown[]) => Promise<T[]>;

/** Reads one at a time: a transaction's, whose statements go one after the other anyway. */
export const singleReads =
  (query: Query): ReadOne =>
  async <T>(read: BatchableRead, params: readonly unknown[]) =>
    (await query<T>(read.sql, params))[0];

/**
 * Batches in flight at once per database. While all are out, the reads asked meanwhile wait and go together: each
 * statement costs the service a socket write and a wake-up of the server (most of a per-row read's time), so under
 * load many reads share one; alone, a read goes at once.
 */
const BATCHES_IN_FLIGHT = 1;
/** Parameter lists in one statement: bounds its arrays and its answer. */
const MAX_BATCH = 100;

/**
 * Reads whose calls made while others are on their way share a statement (`BatchableRead.batched`). A statement that
 * fails reads each of its calls alone, so one call's bad value fails that call only; a database that cannot be reached
 * fails them all at once.
 */
export function batchedReads(query: Query): ReadOne {
  const waiting: Array<() => void> = [];
  let inFlight = 0;
  const schedule = (dispatch: () => void) => {
    if (inFlight >= BATCHES_IN_FLIGHT) return void waiting.push(dispatch);
    inFlight += 1;
    process.nextTick(dispatch);
  };
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else inFlight -= 1;
  };

  const readAlone = singleReads(query);
  const loaderOf = (read: BatchableRead) =>
    new DataLoader<readonly unknown[], Row | undefined>(
      async (calls) => {
        try {
          if (calls.length === 1) return [await readAlone(read, calls[0] as readonly unknown[]).catch(toError)];
          return await readTogether(query, read, calls).catch((error: unknown) =>
            isDatabaseUnreachable(error)
              ? // Every call would fail alike, after a statement each.
                calls.map(() => toError(error))
              : Promise.all(calls.map((params) => readAlone(read, params).catch(toError))),
          );
        } finally {
          release();
        }
      },
      { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: schedule },
    );

  const loaders = new Map<BatchableRead, DataLoader<readonly unknown[], Row | undefined>>();
  return async <T>(read: BatchableRead, params: readonly unknown[]) => {
    let loader = loaders.get(read);
    if (!loader) loaders.set(read, (loader = loaderOf(read)));
    return (await loader.load(params)) as T | undefined;
  };
}

async function readTogether(query: Query, read: BatchableRead, calls: readonly (readonly unknown[])[]) {
  const columns = (calls[0] as readonly unknown[]).map((_, index) => calls.map((params) => params[index]));
  const rows = await query<Row>(read.batched, columns);
  const found: (Row | undefined)[] = new Array(calls.length).fill(undefined);
  for (const { [ORDINAL]: ordinal, ...row } of rows) found[(ordinal as number) - 1] = row;
  return found;
}

const toError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));
