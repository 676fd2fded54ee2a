import { ACCESS_POINT_PROVIDER_TABLE } from '../access-point-providers/repository.js';
import type { AccessPointProvider } from '../access-point-providers/schemas.js';
import { ACCESS_POINT_TABLE } from '../access-points/repository.js';
import type { AccessPoint } from '../access-points/schemas.js';
import { CAPABILITY_TABLE } from '../capabilities/repository.js';
import type { Capability } from '../capabilities/schemas.js';
import type { ChangeNotice } from '../db/change-log.js';
import { NOT_HELD, type NotHeld } from '../core/held.js';
import type { PageRequest, SortOrder } from '../core/paging.js';
import { qualifiedNameOf } from '../core/schemas.js';
import type { Queryable } from '../db/database.js';
import type { ReferenceInput } from '../db/references.js';
import type { CatalogueKind, CatalogueTable } from '../db/catalogue-table.js';
import { DOCUMENT_TYPE_TABLE } from '../document-types/repository.js';
import { readIdentifierSchemes, type HeldIdentifierSchemes } from '../identifier-schemes/repository.js';
import { IdentifierSchemeList } from '../identifier-schemes/schemes.js';
import type { DocumentType } from '../document-types/schemas.js';
import { PROCESS_TABLE } from '../processes/repository.js';
import type { Process } from '../processes/schemas.js';
import { SERVICE_PROVIDER_TABLE } from '../service-providers/repository.js';
import type { ServiceProvider } from '../service-providers/schemas.js';
import { TRANSPORT_PROFILE_TABLE } from '../transport-profiles/repository.js';
import type { TransportProfile } from '../transport-profiles/schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The catalogue in memory, dropped on every catalogue change the log reports. */
    catalogue: CatalogueCache;
  }
}

/** The row of each kind the cache holds, as the API shows it. */
interface CatalogueRows extends Record<CatalogueKind, Identified> {
  process: Process;
  'document-type': DocumentType;
  capability: Capability;
  'transport-profile': TransportProfile;
  'access-point': AccessPoint;
  'access-point-provider': AccessPointProvider;
  'service-provider': ServiceProvider;
}

interface Identified {
  identifier: string;
  qualifiedIdentifier?: string;
}

/** The order a participant's processes are listed in. */
const BY_QUALIFIED_IDENTIFIER: readonly SortOrder[] = [{ property: 'qualifiedIdentifier', direction: 'ASC' }];

/**
 * The bytes of serialized answers one resource's rows keep: the default pages and every item fit many times over;
 * answers built beyond it are sent but not kept, so odd pages cannot make the process grow.
 */
const KEPT_ANSWER_BYTES = 8 * 1024 * 1024;

/** One resource's rows as committed at one moment, read-only, with each row's rank under each sortable property. */
export class HeldRows<T extends Identified> {
  private readonly indexById: ReadonlyMap<string, number>;
  private readonly byQualifiedIdentifier: ReadonlyMap<string, T>;
  private readonly answers = new Map<string, Buffer>();
  private answerBytes = 0;

  /**
   * `rows` in identifier order; `ranks` per sortable property, indexed as `rows`: equal values share a rank, and
   * the ranks follow the database's order (its collation, nulls last), so a page sorts here as the database sorts it.
   */
  constructor(
    readonly rows: readonly T[],
    private readonly ranks: ReadonlyMap<string, readonly number[]>,
  ) {
    this.indexById = new Map(rows.map((row, index) => [row.identifier, index]));
    this.byQualifiedIdentifier = new Map(
      rows.flatMap((row) => (row.qualifiedIdentifier === undefined ? [] : [[row.qualifiedIdentifier, row]])),
    );
  }

  row(id: string): T | undefined {
    const index = this.indexById.get(id);
    return index === undefined ? undefined : this.rows[index];
  }

  /**
   * The answer `key` names, built from these rows by `build` once and kept with them: a change drops the rows and
   * their answers together, so a kept answer is never older than the rows it was built from. Kept as UTF-8 bytes, which
   * a socket takes as they are, where a string is encoded again on every send.
   */
  answer(key: string, build: () => string): Buffer {
    const kept = this.answers.get(key);
    if (kept !== undefined) return kept;
    const built = Buffer.from(build());
    if (this.answerBytes + built.length <= KEPT_ANSWER_BYTES) {
      this.answers.set(key, built);
      this.answerBytes += built.length;
    }
    return built;
  }

  /** The row a reference names, as resolveReferences reads it: by identifier, else by qualified identifier (if rows have one). */
  named(reference: ReferenceInput): T | undefined {
    if (reference.identifier) return this.row(reference.identifier.toLowerCase());
    const name = qualifiedNameOf(reference);
    return name === undefined ? undefined : this.byQualifiedIdentifier.get(name);
  }

  /** One page of all rows, ordered and cut as the database's page of the same request. */
  page(request: PageRequest): { total: number; rows: T[] } {
    const ordered =
      request.orders.length === 0
        ? this.rows
        : this.inOrder(
            this.rows.map((_, index) => index),
            request.orders,
          );
    return { total: this.rows.length, rows: ordered.slice(request.offset, request.offset + request.size) };
  }

  /** The rows `ids` name, those that are here, in `orders` (then identifier order). */
  rowsIn(ids: readonly string[], orders: readonly SortOrder[]): T[] {
    return this.inOrder(
      ids.map((id) => this.indexById.get(id)).filter((index) => index !== undefined),
      orders,
    );
  }

  private inOrder(indexes: number[], orders: readonly SortOrder[]): T[] {
    const keys = orders.map(({ property, direction }) => ({
      ranks: this.ranks.get(property) as readonly number[],
      sign: direction === 'ASC' ? 1 : -1,
    }));
    const rankOf = (ranks: readonly number[], index: number) => ranks[index] as number;
    indexes.sort((a, b) => {
      for (const { ranks, sign } of keys) {
        const difference = (rankOf(ranks, a) - rankOf(ranks, b)) * sign;
        if (difference !== 0) return difference;
      }
      return a - b;
    });
    return indexes.map((index) => this.rows[index] as T);
  }
}

/**
 * Every row of `table` as the API shows it (`Row`: its SELECT list is the response's), with its ranks, in one query
 * (so from one snapshot of the database).
 */
async function loadRows<Row extends Identified>(db: Queryable, table: CatalogueTable): Promise<HeldRows<Row>> {
  const { sortable } = table;
  const properties = Object.keys(sortable);
  const ranks = properties.map((property) => `dense_rank() OVER (ORDER BY ${sortable[property]})`);
  const loaded = await db.query<Identified & { _sortRanks: number[] }>(
    `SELECT ${table.select}, json_build_array(${ranks.join(', ')}) AS "_sortRanks" FROM ${table.from} ORDER BY ${table.id}`,
  );
  // Without its ranks, a row is what the SELECT list makes: the response `Row`.
  const rows = loaded.map(({ _sortRanks, ...row }) => deepFrozen(row as Row));
  const ranksOf = (position: number) => loaded.map((row) => row._sortRanks[position] as number);
  return new HeldRows(rows, new Map(properties.map((property, position) => [property, ranksOf(position)])));
}

/** Answers share the held objects: one that changed them would change every later answer, so none can. */
function deepFrozen<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFrozen(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * A value loaded on first use and kept until dropped; concurrent readers share one load. Each drop counts: a load
 * that began before one is handed to its readers but never kept, so nothing built while a change was heard stays.
 */
class Held<T> {
  private current: T | undefined;
  private generation = 0;
  private loading: { generation: number; value: Promise<T> } | undefined;

  constructor(private readonly load: (db: Queryable) => Promise<T>) {}

  get(db: Queryable): Promise<T> {
    if (this.current) return Promise.resolve(this.current);
    if (this.loading?.generation !== this.generation) this.loading = this.loadFrom(db);
    return this.loading.value;
  }

  /** The value as held now; undefined until it is loaded. */
  now(): T | undefined {
    return this.current;
  }

  drop(): void {
    this.generation += 1;
    this.current = undefined;
  }

  private loadFrom(db: Queryable) {
    const generation = this.generation;
    const value = this.load(db)
      .then((loaded) => {
        if (generation === this.generation) this.current = loaded;
        return loaded;
      })
      .finally(() => {
        if (this.loading?.generation === generation) this.loading = undefined;
      });
    return { generation, value };
  }
}

/** One kind the cache holds: its table, and its rows as loaded on first use. */
interface HeldKind<K extends CatalogueKind> {
  table: CatalogueTable<K>;
  rows: Held<HeldRows<CatalogueRows[K]>>;
}

const holding = <K extends CatalogueKind>(table: CatalogueTable<K>): HeldKind<K> => ({
  table,
  rows: new Held((db) => loadRows<CatalogueRows[K]>(db, table)),
});

/**
 * The catalogue held in memory, kind by kind (processes, document types, capabilities, transport profiles, access
 * points, their providers, service providers) and the identifier schemes: each loaded on first use, dropped on a change
 * the change log reports (`onChange`) of a kind its rows are built from, loaded again by the next reader. Correct only
 * while `onChange` hears every committed change, as `app.changes` makes it.
 */
export class CatalogueCache implements HeldIdentifierSchemes {
  private readonly kinds: { readonly [K in CatalogueKind]: HeldKind<K> } = {
    process: holding(PROCESS_TABLE),
    'document-type': holding(DOCUMENT_TYPE_TABLE),
    capability: holding(CAPABILITY_TABLE),
    'transport-profile': holding(TRANSPORT_PROFILE_TABLE),
    'access-point': holding(ACCESS_POINT_TABLE),
    'access-point-provider': holding(ACCESS_POINT_PROVIDER_TABLE),
    'service-provider': holding(SERVICE_PROVIDER_TABLE),
  };

  private readonly schemes = new Held(async (db) => new IdentifierSchemeList(await readIdentifierSchemes(db)));

  constructor(private readonly db: Queryable) {}

  /** The participant identifier schemes as loaded (the accepted ICDs are asked of them at request time). */
  identifierSchemes(db: Queryable = this.db): Promise<IdentifierSchemeList> {
    return this.schemes.get(db);
  }

  /**
   * The rows of `kind`. A transaction passes itself as `db`: on the embedded database a load through another
   * connection would wait for it forever. (No transaction that writes catalogue rows reads the cache, so a load
   * never sees an uncommitted catalogue.)
   */
  rows<K extends CatalogueKind>(kind: K, db: Queryable = this.db): Promise<HeldRows<CatalogueRows[K]>> {
    return this.kinds[kind].rows.get(db);
  }

  /**
   * The rows of `kind` as held now, when they are loaded and hold every one of `ids`; else `NOT_HELD`. The one way the
   * cache answers from what it holds: an early answer takes this alone, a route's `rowsHolding` starts with it.
   */
  rowsHeld<K extends CatalogueKind>(kind: K, ids: readonly string[]): HeldRows<CatalogueRows[K]> | NotHeld {
    const held = this.kinds[kind].rows.now();
    return held && ids.every((id) => held.row(id) !== undefined) ? held : NOT_HELD;
  }

  /**
   * The rows of `kind` holding every one of `ids` (read from the database): `rowsHeld` when it has them, else loaded,
   * and loaded again when one is not among them: a row newer than the held ones, committed by another instance whose
   * change is not heard yet. Still missing: deleted meanwhile.
   */
  async rowsHolding<K extends CatalogueKind>(
    kind: K,
    ids: readonly string[],
    db?: Queryable,
  ): Promise<HeldRows<CatalogueRows[K]>> {
    const now = this.rowsHeld(kind, ids);
    if (now !== NOT_HELD) return now;
    const held = await this.rows(kind, db);
    if (ids.every((id) => held.row(id) !== undefined)) return held;
    this.kinds[kind].rows.drop();
    return this.rows(kind, db);
  }

  /** The processes `ids` name as held now (`rowsHeld`), in qualified identifier order; else `NOT_HELD`. */
  processesHeld(ids: readonly string[]): Process[] | NotHeld {
    const held = this.rowsHeld('process', ids);
    return held === NOT_HELD ? NOT_HELD : held.rowsIn(ids, BY_QUALIFIED_IDENTIFIER);
  }

  /** The processes `ids` name (`rowsHolding`), in qualified identifier order; one deleted meanwhile is left out. */
  async processesIn(ids: readonly string[], db?: Queryable): Promise<Process[]> {
    return (await this.rowsHolding('process', ids, db)).rowsIn(ids, BY_QUALIFIED_IDENTIFIER);
  }

  /**
   * The ids of the processes `references` name, each once, when the cache knows every one; else undefined,
   * and resolveReferences (the database) answers, with its errors.
   */
  async processIdsOf(references: readonly ReferenceInput[], db?: Queryable): Promise<string[] | undefined> {
    const processes = await this.rows('process', db);
    const ids = references.map((reference) => processes.named(reference)?.identifier).filter((id) => id !== undefined);
    return ids.length === references.length ? [...new Set(ids)] : undefined;
  }

  onChange(notice: ChangeNotice): void {
    for (const { table, rows } of Object.values(this.kinds)) {
      if (table.builtFrom.includes(notice.resource)) rows.drop();
    }
    if (notice.resource === 'identifier-scheme') this.schemes.drop();
  }

  /** Drops every kind: the log it followed was replaced (a failover), or its reads moved to another database. */
  clear(): void {
    for (const { rows } of Object.values(this.kinds)) rows.drop();
    this.schemes.drop();
  }
}
