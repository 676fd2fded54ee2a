import type { ChangeNotice, ChangeResource } from '../changes/log.js';
import type { Queryable } from '../db/database.js';
import type { ReferenceInput } from '../db/references.js';
import { parseQualifiedIdentifier } from '../core/schemas.js';
import { PROCESS_RESPONSE_COLUMNS } from '../processes/repository.js';
import type { Process } from '../processes/schemas.js';

/** The change-log kinds a snapshot is built from (or may be: a provider's title, an access point). */
const CATALOGUE_KINDS: ReadonlySet<ChangeResource> = new Set<ChangeResource>([
  'process', 'document-type', 'capability', 'transport-profile', 'access-point', 'access-point-provider',
]);

/** The catalogue as it was committed at one moment, read-only. */
export class CatalogueSnapshot {
  private readonly byId: ReadonlyMap<string, Process>;
  private readonly byQualifiedIdentifier: ReadonlyMap<string, Process>;
  /** Each process's place in qualified identifier order, as the database collates it. */
  private readonly rank: ReadonlyMap<string, number>;

  /** `processes` in identifier order; `qualifiedOrder` their identifiers in qualified identifier order. */
  constructor(readonly processes: readonly Process[], qualifiedOrder: readonly string[]) {
    this.byId = new Map(processes.map((process) => [process.identifier, process]));
    this.byQualifiedIdentifier = new Map(processes.map((process) => [process.qualifiedIdentifier, process]));
    this.rank = new Map(qualifiedOrder.map((id, index) => [id, index]));
  }

  process(id: string): Process | undefined {
    return this.byId.get(id);
  }

  /** The process a reference names, as resolveReferences reads it: by identifier, else by qualified identifier. */
  processNamed(reference: ReferenceInput): Process | undefined {
    if (reference.identifier) return this.byId.get(reference.identifier.toLowerCase());
    const named = reference.qualifiedIdentifier === undefined ? undefined : parseQualifiedIdentifier(reference.qualifiedIdentifier);
    return named && this.byQualifiedIdentifier.get(`${named.scheme}::${named.value}`);
  }

  /** The processes `ids` name, in qualified identifier order; undefined when one is not in this snapshot. */
  processesIn(ids: readonly string[]): Process[] | undefined {
    const found = ids.map((id) => this.byId.get(id));
    if (found.some((process) => process === undefined)) return undefined;
    const rankOf = (process: Process) => this.rank.get(process.identifier) as number;
    return (found as Process[]).sort((a, b) => rankOf(a) - rankOf(b));
  }
}

async function loadSnapshot(db: Queryable): Promise<CatalogueSnapshot> {
  const rows = await db.query<Process & { qualifiedRank: number }>(
    `SELECT ${PROCESS_RESPONSE_COLUMNS},
            (row_number() OVER (ORDER BY p.scheme || '::' || p.value, p.id))::int AS "qualifiedRank"
       FROM processes p ORDER BY p.id`,
  );
  const qualifiedOrder: string[] = [];
  const processes = rows.map(({ qualifiedRank, ...process }) => {
    qualifiedOrder[qualifiedRank - 1] = process.identifier;
    return process;
  });
  return new CatalogueSnapshot(processes.map(deepFrozen), qualifiedOrder);
}

/** Answers share the snapshot's objects: one that changed them would change every later answer, so none can. */
function deepFrozen<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFrozen(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * The catalogue held in memory: loaded on first use, dropped on any change of a catalogue kind that the change
 * log reports (`onChange`), loaded again by the next reader. Correct only while `onChange` hears every committed
 * change, as `app.changes` makes it.
 */
export class CatalogueCache {
  private current: CatalogueSnapshot | undefined;
  /** Counts the changes heard: a load that began before one must not become the current snapshot. */
  private generation = 0;
  private loading: { generation: number; snapshot: Promise<CatalogueSnapshot> } | undefined;

  constructor(private readonly db: Queryable) {}

  /**
   * The current snapshot; concurrent readers share one load. A transaction passes itself as `db`: on the embedded
   * database a load through another connection would wait for it forever. (No transaction that writes catalogue
   * rows reads the cache, so a load never sees an uncommitted catalogue.)
   */
  snapshot(db: Queryable = this.db): Promise<CatalogueSnapshot> {
    if (this.current) return Promise.resolve(this.current);
    if (this.loading?.generation !== this.generation) this.loading = this.load(db);
    return this.loading.snapshot;
  }

  /**
   * The processes `ids` name, in qualified identifier order. A process newer than the snapshot (committed by
   * another instance, its change not heard yet) makes it load again; still missing: left out (deleted meanwhile).
   */
  async processesIn(ids: readonly string[], db?: Queryable): Promise<Process[]> {
    const cached = (await this.snapshot(db)).processesIn(ids);
    if (cached) return cached;
    this.drop();
    const snapshot = await this.snapshot(db);
    return snapshot.processesIn(ids.filter((id) => snapshot.process(id))) as Process[];
  }

  /**
   * The ids of the processes `references` name, each once, when the snapshot knows every one; else undefined,
   * and resolveReferences (the database) answers, with its errors.
   */
  async processIdsOf(references: readonly ReferenceInput[], db?: Queryable): Promise<string[] | undefined> {
    const snapshot = await this.snapshot(db);
    const ids = references.map((reference) => snapshot.processNamed(reference)?.identifier);
    return ids.every((id) => id !== undefined) ? [...new Set(ids as string[])] : undefined;
  }

  /** The process in the snapshot; undefined when it is not there (unknown, or newer than the snapshot). */
  async process(id: string): Promise<Process | undefined> {
    return (await this.snapshot()).process(id);
  }

  onChange(notice: ChangeNotice): void {
    if (CATALOGUE_KINDS.has(notice.resource)) this.drop();
  }

  drop(): void {
    this.generation += 1;
    this.current = undefined;
  }

  private load(db: Queryable) {
    const generation = this.generation;
    const snapshot = loadSnapshot(db).then((loaded) => {
      if (generation === this.generation) this.current = loaded;
      return loaded;
    }).finally(() => {
      if (this.loading?.generation === generation) this.loading = undefined;
    });
    return { generation, snapshot };
  }
}
