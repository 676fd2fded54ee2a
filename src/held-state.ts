import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyRequest } from 'fastify';
import { CatalogueCache } from './catalogue-cache/catalogue-cache.js';
import { contextual } from './core/contextual.js';
import type { Database } from './db/database.js';
import type { ChangeNotice } from './db/change-log.js';
import type { ChangeSignal } from './db/change-signal.js';
import type { Replication } from './db/replication.js';
import { HeldParticipants } from './participants/held-participants.js';

/** What a request reads with: its database, the catalogue cache built from it, and the log that cache follows. */
export interface DatabaseView {
  db: Database;
  catalogue: CatalogueCache;
  changes: ChangeSignal;
  heldParticipants: HeldParticipants;
}

/** What follows the change log: the catalogue cache, the participant search in memory. */
interface HeldFromLog {
  onChange(notice: ChangeNotice): void;
  /** The log is no longer the one heard: nothing held may be trusted. */
  clear(): void;
}

/** Keeps `held` true to `changes`: each change it hears, and everything again on a reset. */
export function following<T extends HeldFromLog>(held: T, changes: ChangeSignal): T {
  changes.subscribe((notice) => held.onChange(notice));
  changes.onReset(() => held.clear());
  return held;
}

/**
 * The reads of the standby routes (`replication.reads`), with a catalogue cache and a participant search of their own
 * that follow the log of the database read, so that they are never older than what that database shows (beyond its lag).
 */
export function standbyView(replication: Replication, onSearchIndexError: (error: unknown) => void): DatabaseView {
  return {
    db: replication.reads,
    catalogue: following(new CatalogueCache(replication.reads), replication.changes),
    changes: replication.changes,
    heldParticipants: following(new HeldParticipants(replication.reads, onSearchIndexError), replication.changes),
  };
}

/**
 * Which view each request reads with. The standby routes (`reads: 'standby'`, see http/read-routing.ts) read the
 * standby view when the replication says so (`readsFromStandby`: read-your-writes); every other route, and everything
 * outside a request, the primary view. `served` is the view as the application's decorators present it: each use
 * asks which one the request in progress reads with.
 */
export function viewsByRequest(primary: DatabaseView, standby: DatabaseView, replication: Replication) {
  const current = new AsyncLocalStorage<DatabaseView>();
  const viewOf = (request: FastifyRequest) => (replication.readsFromStandby(request.caller) ? standby : primary);
  const now =
    <K extends keyof DatabaseView>(key: K) =>
    () =>
      current.getStore()?.[key];
  return {
    runReads: (request: FastifyRequest, next: () => void) => current.run(viewOf(request), next),
    served: {
      db: contextual(primary.db, now('db')),
      catalogue: contextual(primary.catalogue, now('catalogue')),
      changes: contextual(primary.changes, now('changes')),
      heldParticipants: contextual(primary.heldParticipants, now('heldParticipants')),
    } satisfies DatabaseView,
  };
}
