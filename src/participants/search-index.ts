/**
 * The participants' name search held in memory: what `query` matches (a part of the lowercased name, or the start of
 * the organization identifier) with the other filters of a search, counted exactly and paged in identifier order,
 * without reading a row of the database. The database's trigram index finds the same hits, but counting them
 * rechecks every hit's row there, and that cost grows with the registry (docs/decisions.md, "Issue 31").
 *
 * Columns per participant in typed arrays, the texts in one array of code units, and trigram postings: each trigram
 * of a name lists the participants whose name holds it. A search walks the rarest list of the query's trigrams and
 * checks each entry against the text; hits are not the postings' intersection, so nothing needs them sorted.
 *
 * A search without text is counted from kept counts of the participants by ICD, provider and modification day (the
 * database would count every row in the range), and the database finds its page, which it does without counting.
 *
 * It also holds each participant's processes (as a shared set of their ids) and the day it was given each (its first
 * day, and a shared tuple of the days after it), so that a cold SMP lookup finds an organization's live participants
 * with their providers and processes (`liveParticipantsOf`), and the public lookup its processes with since when it has had
 * them (`processesSinceOf`), without a statement.
 *
 * Its structures each have their file: the postings (`postings.ts`), the columns (`columns.ts`) and a search's page
 * (`search-pages.ts`); `held-participants.ts` loads it and keeps it true to the change log.
 */

import {
  Codes,
  codesOf,
  DELETE_DAY,
  ICD,
  ID_WORDS,
  MODIFIED_DAY,
  NO_DELETE_DAY,
  PROVIDER,
  RECORD,
  SharedTuples,
  TextArena,
} from './columns.js';
import { ANCHORED_POSITIONS, INDEXED_TEXT_MIN_LENGTH, keysOf, PostingLists, trigramAt, TWO_48 } from './postings.js';
import { AllHits, FirstByIdentifier } from './search-pages.js';

/** A participant as the index holds it: the columns a search filters on, and its processes. */
export interface IndexedRow {
  id: string;
  icd: string;
  organizationIdentifier: string;
  /** lower(name) as the database stores it (`name_lower`); null without a name. */
  nameLower: string | null;
  serviceProviderId: string;
  /** Days since 1970-01-01 (UTC). */
  lastModificationDay: number;
  deleteDay: number | null;
  /** Its processes: each one's id and the day (since 1970-01-01, UTC) it was given it. */
  processes: readonly HeldProcess[];
}

/** A process of a participant: its id, and the day (since 1970-01-01, UTC) the participant was given it. */
export type HeldProcess = readonly [id: string, sinceDay: number];

/** A live participant of an organization: its provider and its processes' ids (the SMP's `Receiver`). */
export interface LiveParticipant {
  provider: string;
  processes: readonly string[];
}

/** An organization's live participants, and the first of their delete days. */
export interface LiveParticipants {
  /** By provider id: whichever instance answers lists them alike. */
  participants: LiveParticipant[];
  /** Days since 1970-01-01 (UTC); null when none has a delete date. */
  nextDeleteDay: number | null;
}

/** The filters of a search besides its text. */
export interface IndexedFilter {
  icd?: string;
  /** The caller's provider, or null for all. */
  providerId: string | null;
  modifiedFrom?: number;
  modifiedTo?: number;
  /** Today (days since 1970-01-01, UTC): a participant whose delete day has come is not found. */
  today: number;
}

/** What an indexed search asks: `text` already lowercased, as the database's search takes it. */
export interface IndexedSearch extends IndexedFilter {
  text: string;
  offset: number;
  size: number;
}

/** What a search finds: the count of every hit, and the page's ids in identifier order. */
export interface IndexedAnswer {
  total: number;
  ids: string[];
}

/** Beyond this many rows to skip and show, every hit is sorted instead of keeping the first ones in a heap. */
const HEAP_LIMIT = 1000;

/** FNV-1a of the organization's key, for the open-addressed table that finds a participant's ordinal. */
function hashOf(icd: number, organizationIdentifier: string): number {
  let hash = Math.imul(0x811c9dc5 ^ icd, 0x01000193);
  for (let at = 0; at < organizationIdentifier.length; at += 1) {
    hash = Math.imul(hash ^ organizationIdentifier.charCodeAt(at), 0x01000193);
  }
  return hash >>> 0;
}

/** Where a participant's text starts in the arena, and its name's and identifier's lengths: `SPAN` numbers each. */
const SPAN = 2;
/** The lengths of an ordinal not in use. */
const UNUSED = -1;
/** Room left unused in the arena beyond which, once it is half of the arena, the texts are compacted. */
const COMPACT_AFTER = 1 << 20;

const EMPTY_SLOT = -1;
const FREED_SLOT = -2;
/** What a search walks when one of its keys lists nobody. */
const NO_ENTRIES = new Uint32Array(0);

/** The key of a group of kept counts: an ICD's and a provider's codes, 0 for every ICD or every provider. */
const groupOf = (icd: number, provider: number) => icd * 2 ** 24 + provider;

export class ParticipantSearchIndex {
  private capacity = 0;
  private readonly arena = new TextArena();
  /** At `SPAN * ordinal`: the start of its text in the arena, then its name's length × 65536 + its identifier's. */
  private spans = new Int32Array(0);
  /** What a search reads of each hit, side by side: `RECORD` numbers each (`columns.ts`). */
  private records = new Int32Array(0);
  /** At `ordinal`: the number of its process ids (sorted) in `processSets`. */
  private processSetOf = new Int32Array(0);
  private readonly processSets = new SharedTuples<string>();
  /** At `ordinal`: the day (since 1970-01-01, UTC) it was given its first process. */
  private firstDayOf = new Int32Array(0);
  /**
   * At `ordinal`: the number in `daySets` of how many days after `firstDayOf` it was given each process (in the order of
   * its ids).
   */
  private daySetOf = new Int32Array(0);
  private readonly daySets = new SharedTuples<number>();
  private postings = new PostingLists();
  private readonly icdCodes = new Codes();
  private readonly providerCodes = new Codes();
  private readonly freeOrdinals: number[] = [];
  private count = 0;
  private slots = new Int32Array(16).fill(EMPTY_SLOT);
  private usedSlots = 0;
  /**
   * The participants without a delete day, by group (`groupOf`: each is in four) and then by modification day. A
   * count sums one group's days, a few thousand at most, however many participants they hold.
   */
  private readonly dayCounts = new Map<number, Map<number, number>>();
  /** The participants with a delete day: whether one is alive depends on the day asked, so each is checked. */
  private readonly withDeleteDay = new Set<number>();

  /** The participants held. */
  get size(): number {
    return this.count;
  }

  /**
   * Holds `rows` as the participants of the organization (ICD and identifier): one per provider that serves it, none
   * when it has none left. A row already held (by id) is changed in place: its postings change only with its name.
   * Returns the names it held for the organization before.
   */
  replaceOrganization(icdValue: string, organizationIdentifier: string, rows: readonly IndexedRow[]): string[] {
    const icd = this.icdCodes.of(icdValue);
    const placed = new Set<string>();
    const before: string[] = [];
    for (const { slot, ordinal } of this.heldOf(icd, organizationIdentifier)) {
      const id = this.idAt(ordinal);
      const row = rows.find((candidate) => candidate.id === id);
      before.push(this.nameAt(ordinal));
      if (row) {
        this.write(ordinal, row, this.keysAt(ordinal));
        placed.add(id);
      } else {
        this.removeAt(slot, ordinal);
      }
    }
    for (const row of rows) if (!placed.has(row.id)) this.insert(row);
    return before;
  }

  /** Adds a participant not held yet, listed under its keys at once. */
  insert(row: IndexedRow): void {
    this.hold(row, true);
  }

  /** Adds a participant of the initial load: `finishLoad` lists them all at once, each list sized exactly. */
  load(row: IndexedRow): void {
    this.hold(row, false);
  }

  private hold(row: IndexedRow, listed: boolean): void {
    const ordinal = this.newOrdinal();
    this.write(ordinal, row, undefined, listed);
    this.occupy(this.openSlot(this.icdAt(ordinal), row.organizationIdentifier), ordinal);
  }

  private write(ordinal: number, row: IndexedRow, previousKeys?: Set<number>, listed = true): void {
    const name = row.nameLower ?? '';
    const identifier = row.organizationIdentifier;
    const unchanged =
      previousKeys !== undefined &&
      this.nameLength(ordinal) === name.length &&
      this.arena.equals(this.spans[ordinal * SPAN] as number, name.length, name);
    if (!unchanged) {
      if (previousKeys !== undefined) this.arena.unused += this.textLength(ordinal);
      this.spans[ordinal * SPAN] = this.arena.append(name + identifier);
      this.spans[ordinal * SPAN + 1] = name.length * 0x10000 + identifier.length;
    }
    const record = ordinal * RECORD;
    if (previousKeys !== undefined) this.tally(ordinal, -1);
    this.records[record + DELETE_DAY] = row.deleteDay ?? NO_DELETE_DAY;
    this.records[record + MODIFIED_DAY] = row.lastModificationDay;
    this.records[record + ICD] = this.icdCodes.of(row.icd);
    this.records[record + PROVIDER] = this.providerCodes.of(row.serviceProviderId);
    if (previousKeys !== undefined) this.releaseProcesses(ordinal);
    this.holdProcesses(ordinal, row.processes);
    this.writeId(ordinal, row.id);
    this.tally(ordinal, 1);
    if (unchanged) return;
    if (listed) {
      const keys = keysOf(name, identifier);
      for (const key of previousKeys ?? []) if (!keys.has(key)) this.postings.remove(key, ordinal);
      for (const key of keys) if (!previousKeys?.has(key)) this.postings.add(key, ordinal);
    }
    this.compactWhenWasteful();
  }

  private removeAt(slot: number, ordinal: number): void {
    this.tally(ordinal, -1);
    this.releaseProcesses(ordinal);
    for (const key of this.keysAt(ordinal)) this.postings.remove(key, ordinal);
    this.arena.unused += this.textLength(ordinal);
    this.spans[ordinal * SPAN + 1] = UNUSED;
    this.slots[slot] = FREED_SLOT;
    this.freeOrdinals.push(ordinal);
    this.count -= 1;
    this.compactWhenWasteful();
  }

  private holdProcesses(ordinal: number, processes: readonly HeldProcess[]): void {
    const sorted = [...processes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    this.processSetOf[ordinal] = this.processSets.hold(sorted.map(([id]) => id));
    const first = sorted.length === 0 ? 0 : Math.min(...sorted.map(([, day]) => day));
    this.firstDayOf[ordinal] = first;
    this.daySetOf[ordinal] = this.daySets.hold(sorted.map(([, day]) => day - first));
  }

  private releaseProcesses(ordinal: number): void {
    this.processSets.release(this.processSetOf[ordinal] as number);
    this.daySets.release(this.daySetOf[ordinal] as number);
  }

  /** Copies the texts in use to a new arena once half of it is room left by texts replaced or removed. */
  private compactWhenWasteful(): void {
    const { arena } = this;
    if (arena.unused < COMPACT_AFTER || arena.unused * 2 < arena.end) return;
    const used = arena.end - arena.unused;
    const chars = new Uint16Array(Math.max(1 << 16, Math.ceil(used * 1.5)));
    let end = 0;
    for (let ordinal = 0; ordinal < this.count + this.freeOrdinals.length; ordinal += 1) {
      if (this.spans[ordinal * SPAN + 1] === UNUSED) continue;
      const start = this.spans[ordinal * SPAN] as number;
      const length = this.textLength(ordinal);
      chars.set(arena.chars.subarray(start, start + length), end);
      this.spans[ordinal * SPAN] = end;
      end += length;
    }
    Object.assign(arena, { chars, end, unused: 0 });
  }

  private nameLength(ordinal: number): number {
    return (this.spans[ordinal * SPAN + 1] as number) >>> 16;
  }

  private identifierLength(ordinal: number): number {
    return (this.spans[ordinal * SPAN + 1] as number) & 0xffff;
  }

  private textLength(ordinal: number): number {
    return this.nameLength(ordinal) + this.identifierLength(ordinal);
  }

  /** Lists every participant held under its keys, each list sized exactly, and gives back the texts' room for growth. */
  finishLoad(): void {
    this.postings = PostingLists.of(this.count + this.freeOrdinals.length, (ordinal) =>
      this.spans[ordinal * SPAN + 1] === UNUSED ? [] : this.keysAt(ordinal),
    );
    this.arena.chars = this.arena.chars.slice(0, this.arena.end);
  }

  /** Adds the participant at `ordinal` to its kept counts (`step` 1), or takes it out (-1). */
  private tally(ordinal: number, step: 1 | -1): void {
    const record = ordinal * RECORD;
    if (this.records[record + DELETE_DAY] !== NO_DELETE_DAY) {
      if (step > 0) this.withDeleteDay.add(ordinal);
      else this.withDeleteDay.delete(ordinal);
      return;
    }
    const day = this.records[record + MODIFIED_DAY] as number;
    const icd = this.records[record + ICD] as number;
    const provider = this.records[record + PROVIDER] as number;
    for (const group of [groupOf(icd, provider), groupOf(icd, 0), groupOf(0, provider), groupOf(0, 0)]) {
      let days = this.dayCounts.get(group);
      if (days === undefined) this.dayCounts.set(group, (days = new Map()));
      const count = (days.get(day) ?? 0) + step;
      if (count === 0) days.delete(day);
      else days.set(day, count);
    }
  }

  /** How many participants a search without text finds: the database's count, exactly. */
  countOf(filter: IndexedFilter): number {
    const icd = filter.icd === undefined ? 0 : this.icdCodes.known(filter.icd);
    const provider = filter.providerId === null ? 0 : this.providerCodes.known(filter.providerId);
    // An ICD or provider no participant has had: none has it now.
    if ((filter.icd !== undefined && icd === 0) || (filter.providerId !== null && provider === 0)) return 0;
    const from = filter.modifiedFrom ?? -NO_DELETE_DAY;
    const to = filter.modifiedTo ?? NO_DELETE_DAY;
    let total = 0;
    for (const [day, count] of this.dayCounts.get(groupOf(icd, provider)) ?? [])
      if (day >= from && day <= to) total += count;
    const matches = this.filterOf(filter);
    for (const ordinal of this.withDeleteDay) if (matches(ordinal)) total += 1;
    return total;
  }

  /** Every hit's count and the page's ids in identifier order; the database's search answers the same. */
  search(search: IndexedSearch): IndexedAnswer {
    const { text } = search;
    const codes = codesOf(text);
    const matches = this.filterOf(search);
    const keep = search.offset + search.size;
    const page = keep <= HEAP_LIMIT ? new FirstByIdentifier(keep, this.records) : new AllHits(this.records);
    let total = 0;
    const byName = this.rarestList(0, text.length - INDEXED_TEXT_MIN_LENGTH + 1, (at) => trigramAt(text, at));
    // A text of one trigram is in every name its list names: only longer ones are looked for in the name.
    const checked = text.length > INDEXED_TEXT_MIN_LENGTH;
    for (const ordinal of byName) {
      if (matches(ordinal) && (!checked || this.nameHolds(ordinal, codes))) {
        total += 1;
        page.offer(ordinal);
      }
    }
    const anchored = Math.min(ANCHORED_POSITIONS, text.length - INDEXED_TEXT_MIN_LENGTH + 1);
    const byIdentifier = this.rarestList(0, anchored, (at) => (at + 1) * TWO_48 + trigramAt(text, at));
    for (const ordinal of byIdentifier) {
      // One whose name holds the text as well was counted above.
      if (matches(ordinal) && this.identifierStartsWith(ordinal, codes) && !this.nameHolds(ordinal, codes)) {
        total += 1;
        page.offer(ordinal);
      }
    }
    return {
      total,
      ids: page
        .ordered()
        .slice(search.offset, keep)
        .map((ordinal) => this.idAt(ordinal)),
    };
  }

  /**
   * The organization's participants live on `today` (days since 1970-01-01, UTC) with their providers and processes,
   * as the database's `participantIsLive` finds them; undefined when it has none.
   */
  liveParticipantsOf(icdValue: string, organizationIdentifier: string, today: number): LiveParticipants | undefined {
    const { records } = this;
    const live = this.liveOf(icdValue, organizationIdentifier, today);
    if (live.length === 0) return undefined;
    const nextDeleteDay = Math.min(...live.map((ordinal) => records[ordinal * RECORD + DELETE_DAY] as number));
    const participants = live.map((ordinal) => ({
      provider: this.providerCodes.valueAt(records[ordinal * RECORD + PROVIDER] as number),
      processes: this.processSets.valuesOf(this.processSetOf[ordinal] as number),
    }));
    return {
      participants: participants.sort((a, b) => (a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0)),
      nextDeleteDay: nextDeleteDay === NO_DELETE_DAY ? null : nextDeleteDay,
    };
  }

  /**
   * The processes of the organization's participants live on `today`, each once with the first day one of them was
   * given it (days since 1970-01-01, UTC); undefined when it has no live participant.
   */
  processesSinceOf(icdValue: string, organizationIdentifier: string, today: number): Map<string, number> | undefined {
    const live = this.liveOf(icdValue, organizationIdentifier, today);
    if (live.length === 0) return undefined;
    const since = new Map<string, number>();
    for (const ordinal of live) {
      const firstDay = this.firstDayOf[ordinal] as number;
      const later = this.daySets.valuesOf(this.daySetOf[ordinal] as number);
      this.processSets.valuesOf(this.processSetOf[ordinal] as number).forEach((id, at) => {
        const day = firstDay + (later[at] as number);
        const earliest = since.get(id);
        if (earliest === undefined || day < earliest) since.set(id, day);
      });
    }
    return since;
  }

  /** The ordinals of the organization's participants live on `today`, as `participantIsLive` finds them. */
  private liveOf(icdValue: string, organizationIdentifier: string, today: number): number[] {
    return this.heldOf(this.icdCodes.known(icdValue), organizationIdentifier)
      .map(({ ordinal }) => ordinal)
      .filter((ordinal) => (this.records[ordinal * RECORD + DELETE_DAY] as number) > today);
  }

  /** Whether this index answers `text`: long enough for a trigram, and without NUL (which PostgreSQL refuses). */
  static answers(text: string): boolean {
    return text.length >= INDEXED_TEXT_MIN_LENGTH && !text.includes('\u0000');
  }

  /** The entries of the shortest list of the keys `keyAt` gives for positions `from` to `to` (excluded); none if one is missing. */
  private rarestList(from: number, to: number, keyAt: (at: number) => number): Uint32Array {
    let rarest = -1;
    for (let at = from; at < to; at += 1) {
      const list = this.postings.listOf(keyAt(at));
      if (list < 0 || this.postings.lengthOf(list) === 0) return NO_ENTRIES;
      if (rarest < 0 || this.postings.lengthOf(list) < this.postings.lengthOf(rarest)) rarest = list;
    }
    return rarest < 0 ? NO_ENTRIES : this.postings.entries(rarest);
  }

  private filterOf(search: IndexedFilter): (ordinal: number) => boolean {
    const icd = search.icd === undefined ? undefined : this.icdCodes.known(search.icd);
    const provider = search.providerId === null ? undefined : this.providerCodes.known(search.providerId);
    const from = search.modifiedFrom ?? -NO_DELETE_DAY;
    const to = search.modifiedTo ?? NO_DELETE_DAY;
    const { today } = search;
    const { records } = this;
    return (ordinal) => {
      const record = ordinal * RECORD;
      const modified = records[record + MODIFIED_DAY] as number;
      return (
        (records[record + DELETE_DAY] as number) > today &&
        modified >= from &&
        modified <= to &&
        (icd === undefined || records[record + ICD] === icd) &&
        (provider === undefined || records[record + PROVIDER] === provider)
      );
    };
  }

  private nameHolds(ordinal: number, codes: Uint16Array): boolean {
    return this.arena.holds(this.spans[ordinal * SPAN] as number, this.nameLength(ordinal), codes);
  }

  private identifierStartsWith(ordinal: number, codes: Uint16Array): boolean {
    return this.arena.startsWith(
      (this.spans[ordinal * SPAN] as number) + this.nameLength(ordinal),
      this.identifierLength(ordinal),
      codes,
    );
  }

  private identifierAt(ordinal: number): string {
    return this.arena.text(
      (this.spans[ordinal * SPAN] as number) + this.nameLength(ordinal),
      this.identifierLength(ordinal),
    );
  }

  private nameAt(ordinal: number): string {
    return this.arena.text(this.spans[ordinal * SPAN] as number, this.nameLength(ordinal));
  }

  private keysAt(ordinal: number): Set<number> {
    return keysOf(this.nameAt(ordinal), this.identifierAt(ordinal));
  }

  private newOrdinal(): number {
    this.count += 1;
    const reused = this.freeOrdinals.pop();
    if (reused !== undefined) return reused;
    // No ordinal is free: those in use are the participants held.
    const ordinal = this.count - 1;
    if (ordinal >= this.capacity) this.grow(Math.max(1024, this.capacity * 2));
    return ordinal;
  }

  private grow(capacity: number): void {
    const grown = <A extends Int32Array>(array: A, make: (length: number) => A, width = 1) => {
      const larger = make(capacity * width);
      larger.set(array);
      return larger;
    };
    this.spans = grown(this.spans, (length) => new Int32Array(length), SPAN);
    this.records = grown(this.records, (length) => new Int32Array(length), RECORD);
    this.processSetOf = grown(this.processSetOf, (length) => new Int32Array(length));
    this.firstDayOf = grown(this.firstDayOf, (length) => new Int32Array(length));
    this.daySetOf = grown(this.daySetOf, (length) => new Int32Array(length));
    this.capacity = capacity;
  }

  /** The slots of the organization's participants (one per provider serving it), and their ordinals. */
  private heldOf(icd: number, organizationIdentifier: string): Array<{ slot: number; ordinal: number }> {
    const held: Array<{ slot: number; ordinal: number }> = [];
    const mask = this.slots.length - 1;
    for (let slot = hashOf(icd, organizationIdentifier) & mask; ; slot = (slot + 1) & mask) {
      const ordinal = this.slots[slot] as number;
      if (ordinal === EMPTY_SLOT) return held;
      if (ordinal >= 0 && this.icdAt(ordinal) === icd && this.isOrganization(ordinal, organizationIdentifier))
        held.push({ slot, ordinal });
    }
  }

  /** The first freed or empty slot of the organization's probe sequence. */
  private openSlot(icd: number, organizationIdentifier: string): number {
    const mask = this.slots.length - 1;
    let slot = hashOf(icd, organizationIdentifier) & mask;
    while ((this.slots[slot] as number) >= 0) slot = (slot + 1) & mask;
    return slot;
  }

  private isOrganization(ordinal: number, organizationIdentifier: string): boolean {
    const start = (this.spans[ordinal * SPAN] as number) + this.nameLength(ordinal);
    return this.arena.equals(start, this.identifierLength(ordinal), organizationIdentifier);
  }

  private occupy(slot: number, ordinal: number): void {
    if (this.slots[slot] === EMPTY_SLOT) this.usedSlots += 1;
    this.slots[slot] = ordinal;
    // Freed slots count as used until the table is rebuilt: at half full it doubles (or is rebuilt without them).
    if (this.usedSlots * 2 > this.slots.length)
      this.rebuildSlots(Math.max(16, 2 ** Math.ceil(Math.log2(this.count * 4))));
  }

  private rebuildSlots(length: number): void {
    const old = this.slots;
    this.slots = new Int32Array(length).fill(EMPTY_SLOT);
    this.usedSlots = 0;
    const mask = length - 1;
    for (const ordinal of old) {
      if (ordinal < 0) continue;
      let slot = hashOf(this.icdAt(ordinal), this.identifierAt(ordinal)) & mask;
      while (this.slots[slot] !== EMPTY_SLOT) slot = (slot + 1) & mask;
      this.slots[slot] = ordinal;
      this.usedSlots += 1;
    }
  }

  private icdAt(ordinal: number): number {
    return this.records[ordinal * RECORD + ICD] as number;
  }

  private writeId(ordinal: number, id: string): void {
    const hex = id.replaceAll('-', '');
    for (let word = 0; word < 4; word += 1) {
      this.records[ordinal * RECORD + ID_WORDS + word] = Number.parseInt(hex.slice(word * 8, word * 8 + 8), 16) | 0;
    }
  }

  private idAt(ordinal: number): string {
    let hex = '';
    for (let word = 0; word < 4; word += 1) {
      hex += ((this.records[ordinal * RECORD + ID_WORDS + word] as number) >>> 0).toString(16).padStart(8, '0');
    }
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
