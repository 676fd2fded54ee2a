import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callerOf, Role, type Access } from '../http/auth.js';
import { TooManyRequestsError } from '../core/errors.js';
import { narrowedPage, pageOf, pageRequest } from '../core/paging.js';
import { sharedRuns, Slots } from '../core/concurrency.js';
import { CHANGE_SORTABLE, CHANGE_TIE_BREAKER, changesAfter, findChanges, type ChangeScope } from './repository.js';
import {
  AUDIT_PAGE_RULE,
  AuditPage,
  AuditQuery,
  FeedPage,
  FeedQuery,
  type ChangeEntry,
  type ChangeFilters,
} from './schemas.js';
import { FeedCursors } from './cursors.js';
import type { ChangeSignal } from '../db/change-signal.js';

const READERS: readonly Access[] = [Role.admin, Role.registryAuthority, Role.serviceProvider];

interface AuditRoutesOptions {
  /** The most JSON one page of the audit or the feed carries (CHANGE_PAGE_MAX_BYTES); at least one entry always. */
  pageMaxBytes: number;
}

interface FeedRoutesOptions extends AuditRoutesOptions {
  /** The feed's `wait` polls one user may hold at once; beyond it 429 at once. */
  maxPollsPerUser: number;
}

/** A held poll ends within a minute at most, and usually as soon as a change comes. */
const POLL_RETRY_AFTER_SECONDS = 5;

/** ADMIN and REGISTRY_AUTHORITY see every change; a SERVICE_PROVIDER the history of its own participants. */
function scopeOf(request: FastifyRequest): ChangeScope {
  const caller = callerOf(request);
  return caller.role === Role.serviceProvider ? caller.serviceProviderId : null;
}

/** The entries as `scope` may see them: a provider's without their positions, which count every provider's changes. */
function entriesSeenBy(scope: ChangeScope, entries: ChangeEntry[]): ChangeEntry[] {
  return scope === null ? entries : entries.map(({ seq: _seq, ...entry }) => entry);
}

/**
 * Resolves on the next change this instance hears, after `ms`, when the client goes, or when the service begins to
 * shut down (`closing`), whichever comes first.
 */
function nextChange(changes: ChangeSignal, ms: number, reply: FastifyReply, closing: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop();
      reply.raw.off('close', done);
      closing.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = changes.subscribe(done);
    reply.raw.once('close', done);
    closing.addEventListener('abort', done);
  });
}

/** What a feed read asks, as a key: the polls asking the same at the same time share one read. */
const questionOf = (after: number, limit: number, filters: ChangeFilters, scope: ChangeScope) =>
  JSON.stringify([after, limit, scope, Object.entries(filters).sort()]);

/** The audit trail: paged, newest first. */
export const auditRoutes: FastifyPluginAsyncTypebox<AuditRoutesOptions> = async (app, options) => {
  app.get(
    '/audit',
    {
      schema: {
        summary: 'Find changes: who changed what and when, with the state before and after (newest first)',
        description: AUDIT_PAGE_RULE,
        querystring: AuditQuery,
        response: { 200: AuditPage },
      },
      config: { access: READERS, mediaTypes: ['audit.find'], objectName: 'auditFilter', reads: 'standby' },
    },
    async (request) => {
      const asked = pageRequest(request.query, CHANGE_SORTABLE, CHANGE_TIE_BREAKER);
      const { total, read, rows } = await findChanges(
        app.db,
        request.query,
        scopeOf(request),
        asked,
        options.pageMaxBytes,
      );
      const page = rows.length < read ? narrowedPage(asked, rows.length) : asked;
      return pageOf(entriesSeenBy(scopeOf(request), rows.slice(0, page.size)), total, page);
    },
  );
};

/** The change feed: after a cursor, with a long-poll variant. */
export const feedRoutes: FastifyPluginAsyncTypebox<FeedRoutesOptions> = async (app, options) => {
  const polls = new Slots(options.maxPollsPerUser);
  // Every waiting poll wakes on each change: those asking the same share one read of it.
  const sharedRead = sharedRuns<Awaited<ReturnType<typeof changesAfter>>>();
  const cursors = new FeedCursors(app.db);
  // At shutdown (SIGTERM) every waiting poll answers its page as it stands, so that a deploy neither waits out the
  // polls nor cuts them: a follower asks again, from that page's `next`, at the instance that replaces this one.
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });

  app.get(
    '/changes',
    {
      schema: {
        summary: 'Follow the changes after a cursor, in commit order; `wait` holds the request until one comes',
        querystring: FeedQuery,
        response: { 200: FeedPage },
      },
      config: { access: READERS, mediaTypes: ['changes.feed'], objectName: 'feedFilter', reads: 'standby' },
    },
    async (request, reply) => {
      const { after: cursor, limit, wait, ...filters } = request.query;
      const after = cursor === undefined ? 0 : await cursors.positionOf(cursor);
      const scope = scopeOf(request);
      const answer = async ({ entries, next }: Awaited<ReturnType<typeof changesAfter>>) => ({
        entries: entriesSeenBy(scope, entries),
        next: await cursors.cursorOf(next),
      });
      if (wait === 0) return answer(await changesAfter(app.db, after, limit, filters, scope, options.pageMaxBytes));
      const user = callerOf(request).userId;
      if (!polls.take(user)) {
        throw new TooManyRequestsError(
          POLL_RETRY_AFTER_SECONDS,
          `At most ${options.maxPollsPerUser} waiting polls of the change feed per user`,
          'feed_polls_refused',
        );
      }
      try {
        const deadline = Date.now() + wait * 1000;
        // The poll's own first read; the reads after a change are shared.
        let page = await changesAfter(app.db, after, limit, filters, scope, options.pageMaxBytes);
        for (;;) {
          const remaining = deadline - Date.now();
          if (page.entries.length > 0 || remaining <= 0 || reply.raw.destroyed || closing.signal.aborted)
            return answer(page);
          // Nothing in view yet: wait from the position read, so entries outside the view are not read again. A change
          // this instance heard since the read is read at once; otherwise the next one wakes the request.
          if (app.changes.position <= page.next) await nextChange(app.changes, remaining, reply, closing.signal);
          const { next } = page;
          page = await sharedRead(questionOf(next, limit, filters, scope), () =>
            changesAfter(app.db, next, limit, filters, scope, options.pageMaxBytes),
          );
        }
      } finally {
        polls.release(user);
      }
    },
  );
};
