/** The page of a search (`search-index.ts`): its hits kept in identifier order, the first ones or every one. */

import { compareIds } from './columns.js';

/** What keeps a search's hits for its page. */
export interface PageCollector {
  offer(ordinal: number): void;
  /** The hits kept, in identifier order. */
  ordered(): number[];
}

/** The `keep` hits of lowest identifier, in a max-heap: each other hit costs a comparison with its top. */
export class FirstByIdentifier implements PageCollector {
  private readonly heap: number[] = [];

  constructor(
    private readonly keep: number,
    private readonly words: Int32Array,
  ) {}

  offer(ordinal: number): void {
    const { heap } = this;
    if (heap.length < this.keep) {
      heap.push(ordinal);
      this.siftUp(heap.length - 1);
    } else if (heap.length > 0 && compareIds(this.words, ordinal, heap[0] as number) < 0) {
      heap[0] = ordinal;
      this.siftDown(0);
    }
  }

  ordered(): number[] {
    return [...this.heap].sort((a, b) => compareIds(this.words, a, b));
  }

  private siftUp(from: number): void {
    const { heap } = this;
    for (let at = from; at > 0;) {
      const parent = (at - 1) >> 1;
      if (compareIds(this.words, heap[at] as number, heap[parent] as number) <= 0) return;
      [heap[at], heap[parent]] = [heap[parent] as number, heap[at] as number];
      at = parent;
    }
  }

  private siftDown(from: number): void {
    const { heap } = this;
    for (let at = from; ;) {
      let largest = at;
      for (const child of [2 * at + 1, 2 * at + 2]) {
        if (child < heap.length && compareIds(this.words, heap[child] as number, heap[largest] as number) > 0)
          largest = child;
      }
      if (largest === at) return;
      [heap[at], heap[largest]] = [heap[largest] as number, heap[at] as number];
      at = largest;
    }
  }
}

/** Every hit, sorted at the end: for a page deep in the results. */
export class AllHits implements PageCollector {
  private readonly hits: number[] = [];

  constructor(private readonly words: Int32Array) {}

  offer(ordinal: number): void {
    this.hits.push(ordinal);
  }

  ordered(): number[] {
    return this.hits.sort((a, b) => compareIds(this.words, a, b));
  }
}
