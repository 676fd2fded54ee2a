import type { ChangeNotice } from '../db/change-log.js';

interface Entry {
  body: Buffer;
  /** The answer holds until this instant (a participant's delete date); Infinity when none. */
  until: number;
}

/**
 * The answers already made: signed service metadata per (participant, document type), so that a repeated lookup does
 * not sign again, and service groups.
 * Correct only while `onChange` hears every committed change (the change log). Bounded in bytes: the oldest answers go
 * first.
 */
export class SignedAnswerCache {
  private readonly entries = new Map<string, Entry>();
  private readonly byParticipant = new Map<string, Set<string>>();
  private drops = 0;
  private bytes = 0;

  /** 64 MiB: some 14,000 signed answers of a few processes, the network's busy receivers many times over. */
  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * Taken before reading what an answer is built from: a change heard between those reads and `set` may have made
   * the answer stale, so `set` then keeps nothing (the next lookup builds it again).
   */
  get epoch(): number {
    return this.drops;
  }

  get(participant: string, documentType: string, now = Date.now()): Buffer | undefined {
    const key = keyOf(participant, documentType);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now >= entry.until) {
      this.dropParticipant(participant);
      return undefined;
    }
    return entry.body;
  }

  set(participant: string, documentType: string, body: Buffer, until = Infinity, builtAt = this.epoch): void {
    if (builtAt !== this.drops) return;
    const key = keyOf(participant, documentType);
    this.remove(key);
    this.entries.set(key, { body, until });
    this.bytes += body.length;
    let keys = this.byParticipant.get(participant);
    if (!keys) this.byParticipant.set(participant, (keys = new Set()));
    keys.add(key);
    if (this.bytes > this.maxBytes) this.evictOldest();
  }

  /**
   * Drops what the change can make stale: a participant change touches that organization's answers only (its
   * identifier is the organization's); any other resource (process, document type, access point, provider,
   * transport profile...) can appear in any answer, so everything goes.
   */
  onChange(notice: ChangeNotice): void {
    if (notice.resource === 'participant') this.dropParticipant(notice.identifier.toLowerCase());
    else if (!UNPUBLISHED.has(notice.resource)) this.clear();
  }

  clear(): void {
    this.drops += 1;
    this.entries.clear();
    this.byParticipant.clear();
    this.bytes = 0;
  }

  private dropParticipant(participant: string): void {
    this.drops += 1;
    for (const key of this.byParticipant.get(participant) ?? []) this.remove(key);
    this.byParticipant.delete(participant);
  }

  /**
   * Down to nine tenths of the bound at once: a Map's iteration walks past the slots of the entries deleted before it,
   * so evicting one answer per `set` cost a walk past thousands of them each time, most of a cold lookup's `set`.
   */
  private evictOldest(): void {
    // A Map iterates in insertion order: the oldest answers first.
    for (const oldest of this.entries.keys()) {
      if (this.bytes <= this.maxBytes * EVICTED_DOWN_TO) break;
      this.evict(oldest);
    }
  }

  private evict(key: string): void {
    this.remove(key);
    const participant = key.slice(0, key.indexOf('\u0000'));
    const keys = this.byParticipant.get(participant);
    keys?.delete(key);
    if (keys?.size === 0) this.byParticipant.delete(participant);
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.body.length;
    this.entries.delete(key);
  }
}

const EVICTED_DOWN_TO = 0.9;

/** What no SMP answer is built from: a change of it keeps every answer. */
const UNPUBLISHED: ReadonlySet<ChangeNotice['resource']> = new Set([
  'user',
  'capability',
  'sign-in-lock',
  'register-flag',
  'removal-notice',
]);

const keyOf = (participant: string, documentType: string) => `${participant}\u0000${documentType}`;
