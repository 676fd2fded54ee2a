import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyRequest } from 'fastify';
import { CatalogueCache } from './catalogue-cache/catalogue-cache.js';
import { contextual } from './core/contextual.js';
import type { Database } from './db/database.js';
import type { ChangeNotice } from './db/change-log.js';
import type { ChangeSignal } from './db/change-signal.js';
import type { Replication } from './db/replication.js';
import { HeldSearchIndex } from './participants/held-search-index.js';

/** What a request reads with: its database, the catalogue cache built from it, and the log that cache follows. */
export interface DatabaseView {
  db: Database;
  catalogue: CatalogueCache;
  changes: ChangeSignal;
  participantSearch: HeldSearchIndex;
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
 * The reads of the standby routes: from the standby chosen (else the primary), with a catalogue cache of their own
 * that follows the log of that database, so that it is never older than what that database shows (beyond its lag);
 * writes still go to the primary's database, `primary.db`.
 */
export function standbyView(replication: Replication, primary: DatabaseView, onSearchIndexError: (error: unknown) => void): DatabaseView {
  return {
    db: { ...replication.db, transaction: primary.db.transaction },
    catalogue: following(new CatalogueCache(replication.db), replication.changes),
    changes: replication.changes,
    participantSearch: following(new HeldSearchIndex(replication.db, onSearchIndexError), replication.changes),
  };
}

/**
 * Which view each request reads with. The standby routes (`reads: 'standby'`, see http/read-routing.ts) read the
 * standby view, unless the caller (or its provider) made a write the standby view does not show yet (read-your-writes),
 * and the primary answers; every other route, and everything outside a request, the primary view. `served` is the
 * view as the application's decorators present it: each use asks which one the request in progress reads with.
 */
export function viewsByRequest(primary: DatabaseView, standby: DatabaseView, replication: Replication) {
  const current = new AsyncLocalStorage<DatabaseView>();
  const viewOf = (request: FastifyRequest) =>
    !replication.primaryUp || request.caller === null || replication.showsWritesOf(request.caller) ? standby : primary;
  const now = <K extends keyof DatabaseView>(key: K) => () => current.getStore()?.[key];
  return {
    runReads: (request: FastifyRequest, next: () => void) => current.run(viewOf(request), next),
    served: {
      db: contextual(primary.db, now('db')),
      catalogue: contextual(primary.catalogue, now('catalogue')),
      changes: contextual(primary.changes, now('changes')),
      participantSearch: contextual(primary.participantSearch, now('participantSearch')),
    } satisfies DatabaseView,
  };
}
