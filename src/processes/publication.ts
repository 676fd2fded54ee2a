/**
 * A process or document type past its removal instant (`removedFrom`) is no longer published, from that instant, by
 * every instance alike: each reads the same instant from the catalogue and compares it with its own clock, as the SMP
 * certificate rollover does (smp/keys.ts). What is built from the catalogue and kept (signed answers, service group
 * lists, the public lookup's processes) holds until the first removal instant after it was built at the latest.
 */
import type { Process } from './schemas.js';

interface Removable {
  removedFrom: string | null;
}

/** Whether the entry's removal instant has come at `now` (ms since the epoch). */
export const removedAt = (entry: Removable, now: number): boolean =>
  entry.removedFrom !== null && Date.parse(entry.removedFrom) <= now;

/** Whether the entry is published at `now`: visible, and not removed. */
export const publishedAt = (entry: Removable & { visible: boolean }, now: number): boolean =>
  entry.visible && !removedAt(entry, now);

/** The first removal instant after `now` of the processes and their document types; Infinity when none comes. */
export function nextRemovalOf(processes: Iterable<Process | undefined>, now: number): number {
  let next = Infinity;
  const consider = ({ removedFrom }: Removable) => {
    const instant = removedFrom === null ? Infinity : Date.parse(removedFrom);
    if (instant > now && instant < next) next = instant;
  };
  for (const process of processes) {
    if (!process) continue;
    consider(process);
    process.documentTypes.forEach(consider);
  }
  return next;
}

/** A held process as shown without its removed document types, kept while no removal instant passes. */
interface Shown {
  process: Process;
  /** The span of time (ms) this showing holds for: between the removal instants around its making. */
  from: number;
  until: number;
}

const shown = new WeakMap<Process, Shown>();

/**
 * The process as it is published at `now` (the public lookup): undefined once it is removed; else itself, or, while
 * one of its document types is removed, a frozen copy without them, kept with the held process (so its serialized
 * bytes are kept too, held-json.ts) until the next removal instant.
 */
export function processPublishedAt(process: Process, now: number): Process | undefined {
  if (removedAt(process, now)) return undefined;
  const kept = shown.get(process);
  if (kept && now >= kept.from && now < kept.until) return kept.process;
  const instants = process.documentTypes.flatMap(({ removedFrom }) =>
    removedFrom === null ? [] : [Date.parse(removedFrom)],
  );
  const passed = instants.filter((instant) => instant <= now);
  const documentTypes = process.documentTypes.filter((documentType) => !removedAt(documentType, now));
  const published =
    passed.length === 0
      ? process
      : Object.freeze({ ...process, documentTypes: Object.freeze(documentTypes) as Process['documentTypes'] });
  shown.set(process, {
    process: published,
    from: Math.max(-Infinity, ...passed),
    until: nextRemovalOf([process], now),
  });
  return published;
}
