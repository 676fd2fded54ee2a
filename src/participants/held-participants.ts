import { NOT_HELD, type NotHeld } from '../core/held.js';
import type { ChangeNotice } from '../db/change-log.js';
import { PLAN_PER_VALUES, type Queryable } from '../db/database.js';
import type { PageRequest } from '../core/paging.js';
import { parseOrganization, type Organization } from './identifiers.js';
import { processesSinceOf, searchTextOf, type Scope } from './repository.js';
import type { ParticipantFilter } from './schemas.js';
import {
  ParticipantSearchIndex,
  type IndexedAnswer,
  type IndexedFilter,
  type IndexedRow,
  type IndexedSearch,
  type LiveParticipant,
} from './search-index.js';

/** Rows the initial load reads at a time, by key after the last: both databases, no cursor, bounded memory. */
const LOAD_BATCH = 20_000;
/** Searches whose count and page are kept (the oldest go first): each is a few hundred bytes. */
const ANSWERS_KEPT = 1000;
/** How long after a failed load or reload the index loads everything again. */
const RETRY_MS = 10_000;
/** Organizations changed that one reload reads at once. */
const RELOAD_BATCH = 1000;
/**
 * How long a change waits for a search before its organization is read anyway: a search reads what changed before it
 * answers, so the wait only gathers the changes of busy writers into one read instead of one read for each few writes.
 */
const RELOAD_DELAY_MS = 1000;

const INDEXED_COLUMNS = `id::text AS id, icd, organization_identifier AS "organizationIdentifier", name_lower AS "nameLower",
  service_provider_id::text AS "serviceProviderId",
  (last_modification_date - DATE '1970-01-01') AS "lastModificationDay", (delete_date - DATE '1970-01-01') AS "deleteDay",
  ${processesSinceOf('participants.id')} AS processes`;

const DAY_MS = 86_400_000;
const dayOf = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
/** The days written as dates so far (a registry's days are a few thousand): a `Date` each time was a tenth of a lookup. */
const DATES_KEPT = 100_000;
const dates = new Map<number, string>();
function dateOf(day: number): string {
  let date = dates.get(day);
  if (date === undefined) {
    if (dates.size >= DATES_KEPT) dates.clear();
    dates.set(day, (date = new Date(day * DAY_MS).toISOString().slice(0, 10)));
  }
  return date;
}
const today = () => Math.floor(Date.now() / DAY_MS);

/** An organization's live participants with their providers and processes, and the first of their delete dates. */
export interface LiveOrganization {
  /** By provider id. */
  participants: readonly LiveParticipant[];
  /** YYYY-MM-DD; null when none has a delete date. */
  nextDeleteDate: string | null;
}

function indexedFilter(filter: ParticipantFilter, scope: Scope): IndexedFilter {
  const days = (...dates: Array<string | undefined>) => dates.filter((date) => date !== undefined).map(dayOf);
  return {
    icd: filter.icd,
    providerId: scope,
    modifiedFrom: Math.max(-Infinity, ...days(filter.lastModificationDate, filter.lastModificationDateFrom)),
    modifiedTo: Math.min(Infinity, ...days(filter.lastModificationDate, filter.lastModificationDateTo)),
    today: today(),
  };
}

/** Why the index is not answering, for the metrics and the log. */
export type SearchIndexState = 'loading' | 'ready' | 'failed' | 'off';

declare module 'fastify' {
  interface FastifyInstance {
    /** The participants held in memory, of the database the request reads (`app.db`). */
    heldParticipants: HeldParticipants;
  }
}

/**
 * The organization lookups the participants held answer, as the database's finders would: undefined when the
 * organization has no live participant. Held state or nothing: a snapshot is given only when it shows every change
 * heard (`HeldParticipants.held`, `caughtUp`), else `NOT_HELD`, and the database answers.
 */
export interface ParticipantsSnapshot {
  /** The organization's live participants with their providers and processes; undefined when it has none. */
  liveParticipantsOf(organization: Organization): LiveOrganization | undefined;
  /** The processes of the organization's live participants, each with the day (YYYY-MM-DD) since which one has had it; undefined without one. */
  processesSinceOf(organization: Organization): ReadonlyMap<string, string> | undefined;
}

/**
 * The participants of one database held in memory (`ParticipantSearchIndex`), with their loader: loaded at start and
 * kept true to the change log, they answer the participant search, the SMP's service groups and the public lookup's
 * organization processes without a statement. Each change
 * of a participant reloads its organization's rows (`onChange`: at the next search, or a second later), a reset of the
 * log reloads everything (`clear`).
 * Off until `load` is called (the application follows the change log); until loaded, and for what it cannot answer
 * (a text under a trigram, a sort order), `search` gives `NOT_HELD` and the database answers. A search first waits
 * for the reloads of the changes heard before it, so a client that has written (this instance catches its caches up
 * before answering a write) finds what it wrote.
 */
export class HeldParticipants {
  private index = new ParticipantSearchIndex();
  /**
   * Searches already counted, by what they asked: a change drops those whose text the participant's name (before or
   * after it) holds or its identifier starts with, the only searches it can change; a new day or load drops them all.
   */
  private readonly answered = new Map<string, { text: string; answer: IndexedAnswer }>();
  private current: SearchIndexState = 'off';
  private readonly changed = new Set<string>();
  private reloading: Promise<void> = Promise.resolve();
  /** While the organizations changed are read: what is held is not yet what the changes heard made. */
  private reloadRunning = false;
  private queued: Promise<void> | undefined;
  private delayedReload: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private generation = 0;
  private stopped = false;

  constructor(
    private readonly db: Queryable,
    private readonly onError: (error: unknown) => void,
    private readonly reloadDelayMs = RELOAD_DELAY_MS,
  ) {}

  get state(): SearchIndexState {
    return this.current;
  }

  /** The participants held (live or not yet purged). */
  get size(): number {
    return this.index.size;
  }

  /** Loads every participant; the changes heard meanwhile are applied after. */
  async load(): Promise<void> {
    if (this.stopped) return;
    const generation = ++this.generation;
    const index = new ParticipantSearchIndex();
    this.current = 'loading';
    try {
      let after = '00000000-0000-0000-0000-000000000000';
      for (;;) {
        // Ordered by the column, not the text the list names `id`, and planned for each key: the primary key finds each batch.
        const rows = await this.db.query<IndexedRow>(
          `${PLAN_PER_VALUES} SELECT ${INDEXED_COLUMNS} FROM participants WHERE participants.id > $1::uuid ORDER BY participants.id LIMIT ${LOAD_BATCH}`,
          [after],
        );
        if (generation !== this.generation) return;
        for (const row of rows) index.load(row);
        if (rows.length < LOAD_BATCH) break;
        after = (rows[rows.length - 1] as IndexedRow).id;
      }
      index.finishLoad();
      this.index = index;
      this.answered.clear();
      this.current = 'ready';
      await this.reload();
    } catch (error) {
      if (generation !== this.generation) return;
      this.onError(error);
      this.retryLater();
    }
  }

  /** Stops loading and retrying (the application closes). */
  stop(): void {
    this.stopped = true;
    this.generation += 1;
    this.current = 'off';
    clearTimeout(this.retry);
    clearTimeout(this.delayedReload);
  }

  onChange(notice: ChangeNotice): void {
    if (notice.resource !== 'participant' || this.current === 'off') return;
    this.changed.add(notice.identifier);
    if (this.current !== 'ready') return;
    if (this.changed.size >= RELOAD_BATCH) void this.reload();
    else this.delayedReload ??= setTimeout(() => void this.reload(), this.reloadDelayMs).unref();
  }

  /**
   * The log is no longer the one heard: everything held is loaded again. An index that is off stays off: the reads of
   * a standby are reset whenever they move to another database, at the first check too (PARTICIPANT_SEARCH_IN_MEMORY).
   */
  clear(): void {
    this.changed.clear();
    if (this.current !== 'off') void this.load();
  }

  /**
   * The page and its exact total as the database's search finds them (in identifier order), or `NOT_HELD` when the
   * database has to answer: not loaded, a text the index cannot look up, a sort order asked for.
   */
  async search(filter: ParticipantFilter, scope: Scope, page: PageRequest): Promise<IndexedAnswer | NotHeld> {
    const text = searchTextOf(filter);
    if (!text || !ParticipantSearchIndex.answers(text) || page.orders.length > 0 || !(await this.catchUp()))
      return NOT_HELD;
    const search: IndexedSearch = { ...indexedFilter(filter, scope), text, offset: page.offset, size: page.size };
    const key = JSON.stringify(search);
    const kept = this.answered.get(key);
    if (kept) return kept.answer;
    const answer = this.index.search(search);
    if (this.answered.size >= ANSWERS_KEPT) this.answered.delete(this.answered.keys().next().value as string);
    this.answered.set(key, { text, answer });
    return answer;
  }

  /**
   * The exact total of a search without text, in any order, or `NOT_HELD` when the database has to count: not loaded,
   * or a text asked for.
   */
  async total(filter: ParticipantFilter, scope: Scope): Promise<number | NotHeld> {
    if (searchTextOf(filter) || !(await this.catchUp())) return NOT_HELD;
    return this.index.countOf(indexedFilter(filter, scope));
  }

  /**
   * The participants held, as a snapshot to be read at once, when they show every change heard: loaded, nothing
   * pending, no reload running; else `NOT_HELD`, and the database answers. The one way they answer from memory: an
   * early answer takes this alone (it must not wait), a route's `caughtUp` gives the same snapshot.
   */
  held(): ParticipantsSnapshot | NotHeld {
    return this.showsEveryChange() ? this.lookups : NOT_HELD;
  }

  /**
   * As `held`, once what changed is read (like a search): the snapshot whenever they are loaded, `NOT_HELD` when the
   * database has to answer. A route's path.
   */
  async caughtUp(): Promise<ParticipantsSnapshot | NotHeld> {
    return (await this.catchUp()) ? this.lookups : NOT_HELD;
  }

  private readonly lookups: ParticipantsSnapshot = {
    liveParticipantsOf: (organization) => this.heldLiveParticipants(organization),
    processesSinceOf: (organization) => this.heldProcessesSince(organization),
  };

  private heldProcessesSince(organization: Organization): ReadonlyMap<string, string> | undefined {
    const held = this.index.processesSinceOf(organization.icd, organization.organizationIdentifier, today());
    return held && new Map([...held].map(([id, day]) => [id, dateOf(day)]));
  }

  /** Whether what is held is what every change heard made: loaded, nothing pending, no reload running. */
  private showsEveryChange(): boolean {
    return this.current === 'ready' && this.changed.size === 0 && !this.reloadRunning;
  }

  private heldLiveParticipants(organization: Organization): LiveOrganization | undefined {
    const held = this.index.liveParticipantsOf(organization.icd, organization.organizationIdentifier, today());
    return (
      held && {
        participants: held.participants,
        nextDeleteDate: held.nextDeleteDay === null ? null : dateOf(held.nextDeleteDay),
      }
    );
  }

  /** Whether the index is loaded and has applied the changes heard so far. */
  private async catchUp(): Promise<boolean> {
    if (this.current !== 'ready') return false;
    await (this.changed.size > 0 ? this.reload() : this.reloading);
    return this.current === 'ready';
  }

  /** Drops the answers kept for texts that a participant with one of `names`, or with `identifier`, matches. */
  private forgetAnswersMatching(names: readonly string[], identifier: string): void {
    for (const [key, { text }] of this.answered) {
      if (identifier.startsWith(text) || names.some((name) => name.includes(text))) this.answered.delete(key);
    }
  }

  /**
   * Reads the rows of the organizations changed since the last reload: one reload at a time, and one waiting at
   * most, which takes every change heard until it starts.
   */
  private reload(): Promise<void> {
    clearTimeout(this.delayedReload);
    this.delayedReload = undefined;
    this.queued ??= this.reloading
      .then(() => {
        this.queued = undefined;
        return this.reloadChanged();
      })
      .catch((error: unknown) => {
        this.onError(error);
        this.retryLater();
      });
    this.reloading = this.queued;
    return this.queued;
  }

  /** After a failure the database answers until a new load, a while later, has read everything again. */
  private retryLater(): void {
    // Stopped: the database may be closed already, and nothing will search.
    if (this.stopped) return;
    this.current = 'failed';
    this.generation += 1;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.load(), RETRY_MS).unref();
  }

  private async reloadChanged(): Promise<void> {
    this.reloadRunning = true;
    try {
      await this.reloadEachChanged();
    } finally {
      this.reloadRunning = false;
    }
  }

  private async reloadEachChanged(): Promise<void> {
    while (this.changed.size > 0 && this.current === 'ready') {
      const identifiers = [...this.changed].slice(0, RELOAD_BATCH);
      for (const identifier of identifiers) this.changed.delete(identifier);
      const organizations = identifiers.map(parseOrganization).filter((organization) => organization !== undefined);
      const rows = await this.db.query<IndexedRow>(
        `SELECT ${INDEXED_COLUMNS} FROM participants
          WHERE (icd, organization_identifier) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
        [
          organizations.map((organization) => organization.icd),
          organizations.map((organization) => organization.organizationIdentifier),
        ],
      );
      const keyOf = (icd: string, organizationIdentifier: string) => `${icd}:${organizationIdentifier}`;
      const rowsOf = Map.groupBy(rows, (row) => keyOf(row.icd, row.organizationIdentifier));
      for (const { icd, organizationIdentifier } of organizations) {
        const rows = rowsOf.get(keyOf(icd, organizationIdentifier)) ?? [];
        const before = this.index.replaceOrganization(icd, organizationIdentifier, rows);
        if (this.answered.size > 0)
          this.forgetAnswersMatching([...before, ...rows.map((row) => row.nameLower ?? '')], organizationIdentifier);
      }
    }
  }
}
