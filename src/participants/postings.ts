/**
 * The trigram postings of the participants held (`search-index.ts`): the keys a participant is listed under, and for
 * each key the participants listed, in one pool.
 */

/** Trigrams shorter texts cannot be looked up by: the database answers them. */
export const INDEXED_TEXT_MIN_LENGTH = 3;

/**
 * Positions of the organization identifier whose trigrams are listed (anchored to their position): enough to make a
 * prefix's rarest list short, while a long identifier does not list all of its trigrams.
 */
export const ANCHORED_POSITIONS = 6;
const TWO_16 = 0x10000;
export const TWO_48 = 2 ** 48;

export const trigramAt = (text: string, at: number) =>
  (text.charCodeAt(at) * TWO_16 + text.charCodeAt(at + 1)) * TWO_16 + text.charCodeAt(at + 2);

/** The distinct keys a participant is listed under: its name's trigrams, its identifier's first anchored ones. */
export function keysOf(nameLower: string, organizationIdentifier: string): Set<number> {
  const keys = new Set<number>();
  for (let at = 0; at + INDEXED_TEXT_MIN_LENGTH <= nameLower.length; at += 1) keys.add(trigramAt(nameLower, at));
  const anchored = Math.min(ANCHORED_POSITIONS, organizationIdentifier.length - INDEXED_TEXT_MIN_LENGTH + 1);
  for (let at = 0; at < anchored; at += 1) keys.add((at + 1) * TWO_48 + trigramAt(organizationIdentifier, at));
  return keys;
}

/**
 * The postings: for each key, an unordered list of ordinals (removal swaps the last entry in), all in one pool. A list
 * that outgrows its room moves to the pool's end with twice the room; the pool, when full, is copied into a new one
 * without the rooms left behind. Thousands of lists growing apart would each leave freed buffers that the allocator
 * keeps: one pool, large enough to be mapped on its own, is given back whole when it is replaced.
 */
export class PostingLists {
  private pool = new Uint32Array(1 << 16);
  private end = 0;
  private readonly lists = new Map<number, number>();
  private starts = new Int32Array(1024);
  private lengths = new Int32Array(1024);
  private rooms = new Int32Array(1024);

  /** The list of `key` (a number for `entries`), or -1 when no participant was ever listed under it. */
  listOf(key: number): number {
    return this.lists.get(key) ?? -1;
  }

  lengthOf(list: number): number {
    return this.lengths[list] as number;
  }

  /** The list's ordinals, valid until the next change. */
  entries(list: number): Uint32Array {
    const start = this.starts[list] as number;
    return this.pool.subarray(start, start + (this.lengths[list] as number));
  }

  add(key: number, ordinal: number): void {
    const list = this.lists.get(key) ?? this.newList(key);
    if (this.lengths[list] === this.rooms[list]) this.move(list, Math.max(4, (this.rooms[list] as number) * 2));
    this.pool[(this.starts[list] as number) + (this.lengths[list] as number)] = ordinal;
    this.lengths[list] = (this.lengths[list] as number) + 1;
  }

  /** Recent participants are at the end, where the search for them starts. */
  remove(key: number, ordinal: number): void {
    const list = this.lists.get(key);
    if (list === undefined) return;
    const start = this.starts[list] as number;
    const last = start + (this.lengths[list] as number) - 1;
    const at = this.pool.lastIndexOf(ordinal, last);
    if (at < start) return;
    this.pool[at] = this.pool[last] as number;
    this.lengths[list] = last - start;
  }

  /**
   * The lists of the first `ordinals` participants (a load), each sized exactly, with a little room at the pool's end
   * for the lists that grow first. `keysAt` is asked twice for each: to size the lists, then to fill them.
   */
  static of(ordinals: number, keysAt: (ordinal: number) => Iterable<number>): PostingLists {
    const postings = new PostingLists();
    for (let ordinal = 0; ordinal < ordinals; ordinal += 1) {
      for (const key of keysAt(ordinal)) {
        const list = postings.lists.get(key) ?? postings.newList(key);
        postings.rooms[list] = (postings.rooms[list] as number) + 1;
      }
    }
    let end = 0;
    for (let list = 0; list < postings.lists.size; list += 1) {
      postings.starts[list] = end;
      end += postings.rooms[list] as number;
    }
    postings.pool = new Uint32Array(end + Math.max(1 << 16, Math.ceil(end / 8)));
    postings.end = end;
    for (let ordinal = 0; ordinal < ordinals; ordinal += 1) {
      for (const key of keysAt(ordinal)) {
        const list = postings.lists.get(key) as number;
        postings.pool[(postings.starts[list] as number) + (postings.lengths[list] as number)] = ordinal;
        postings.lengths[list] = (postings.lengths[list] as number) + 1;
      }
    }
    return postings;
  }

  private newList(key: number): number {
    const list = this.lists.size;
    if (list === this.starts.length) {
      const grown = (array: Int32Array) => {
        const larger = new Int32Array(array.length * 2);
        larger.set(array);
        return larger;
      };
      [this.starts, this.lengths, this.rooms] = [grown(this.starts), grown(this.lengths), grown(this.rooms)];
    }
    this.lists.set(key, list);
    return list;
  }

  private move(list: number, room: number): void {
    if (this.end + room > this.pool.length) {
      let used = room;
      for (let other = 0; other < this.lists.size; other += 1) used += this.rooms[other] as number;
      this.repack(Math.max(1 << 16, Math.ceil(used * 1.25)));
    }
    const start = this.starts[list] as number;
    this.pool.copyWithin(this.end, start, start + (this.lengths[list] as number));
    this.starts[list] = this.end;
    this.rooms[list] = room;
    this.end += room;
  }

  /** Copies every list, with its room, into a new pool of `size`: the rooms lists left behind are dropped. */
  private repack(size: number): void {
    const pool = new Uint32Array(size);
    let end = 0;
    for (let list = 0; list < this.lists.size; list += 1) {
      const start = this.starts[list] as number;
      pool.set(this.pool.subarray(start, start + (this.lengths[list] as number)), end);
      this.starts[list] = end;
      end += this.rooms[list] as number;
    }
    this.pool = pool;
    this.end = end;
  }
}
