import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { callerOf, Role, type Access } from '../http/auth.js';
import { narrowedPage, pageOf, pageRequest } from '../core/paging.js';
import { CHANGE_SORTABLE, CHANGE_TIE_BREAKER, changesAfter, findChanges, type ChangeScope } from './repository.js';
import { AUDIT_PAGE_RULE, AuditPage, AuditQuery, FeedPage, FeedQuery } from './schemas.js';
import type { ChangeSignal } from './signal.js';
import { deliveryStatus } from './delivery.js';
import { DeliveryStatusList } from './schemas.js';

const READERS: readonly Access[] = [Role.admin, Role.registryAuthority, Role.serviceProvider];

/** ADMIN and REGISTRY_AUTHORITY see every change; a SERVICE_PROVIDER the history of its own participants. */
function scopeOf(request: FastifyRequest): ChangeScope {
  const caller = callerOf(request);
  return caller.role === Role.serviceProvider ? caller.serviceProviderId : null;
}

/** Resolves on the next change this instance hears, or after `ms`, whichever comes first. */
function nextChange(changes: ChangeSignal, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = changes.subscribe(done);
  });
}

export interface ChangeRoutesOptions {
  /** The most JSON one page of the audit or the feed carries (CHANGE_PAGE_MAX_BYTES); at least one entry always. */
  pageMaxBytes: number;
}

/** The audit trail (paged, newest first) and the change feed (after a cursor, with a long-poll variant). */
const changeRoutes: FastifyPluginAsyncTypebox<ChangeRoutesOptions> = async (app, { pageMaxBytes }) => {
  app.get('/audit', {
    schema: {
      summary: 'Find changes: who changed what and when, with the state before and after (newest first)',
      description: AUDIT_PAGE_RULE,
      querystring: AuditQuery, response: { 200: AuditPage },
    },
    config: { access: READERS, mediaTypes: ['audit.find'], objectName: 'auditFilter' },
  }, async (request) => {
    const asked = pageRequest(request.query, CHANGE_SORTABLE, CHANGE_TIE_BREAKER);
    const { total, read, rows } = await findChanges(app.db, request.query, scopeOf(request), asked, pageMaxBytes);
    const page = rows.length < read ? narrowedPage(asked, rows.length) : asked;
    return pageOf(rows.slice(0, page.size), total, page);
  });

  app.get('/deliveries', {
    schema: {
      summary: 'Delivery to the SML: changes pending, age of the oldest, failed attempts and the last error',
      response: { 200: DeliveryStatusList },
    },
    config: { access: [Role.admin, Role.registryAuthority], mediaTypes: ['deliveries.find'] },
  }, async () => deliveryStatus(app.db));

  app.get('/changes', {
    schema: {
      summary: 'Follow the changes after a cursor, in commit order; `wait` holds the request until one comes',
      querystring: FeedQuery, response: { 200: FeedPage },
    },
    config: { access: READERS, mediaTypes: ['changes.feed'], objectName: 'feedFilter' },
  }, async (request) => {
    const { after, limit, wait, ...filters } = request.query;
    const scope = scopeOf(request);
    const deadline = Date.now() + wait * 1000;
    let cursor = after;
    for (;;) {
      const page = await changesAfter(app.db, cursor, limit, filters, scope, pageMaxBytes);
      const remaining = deadline - Date.now();
      if (page.entries.length > 0 || remaining <= 0 || request.raw.destroyed) return page;
      // Nothing in view yet: wait from the position read, so entries outside the view are not read again.
      cursor = page.next;
      // A change this instance heard since the read is read at once; otherwise the next one wakes the request.
      if (app.changes.position <= cursor) await nextChange(app.changes, remaining);
    }
  });
};

export default changeRoutes;
