import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../db/database.js';

export type ChangeResource = 'participant' | 'process' | 'document-type' | 'access-point' | 'access-point-provider'
  | 'service-provider' | 'transport-profile' | 'capability' | 'user';
export type ChangeOperation = 'create' | 'update' | 'delete' | 'transfer' | 'expire';

/** What a cache hears of a committed change (the contract in the COMMON.md). */
export interface ChangeNotice {
  /** The change log entry's position (monotonic). */
  seq: number;
  resource: ChangeResource;
  /** Participants: `iso6523-actorid-upis::{icd}:{organizationIdentifier}` as stored; else the id (UUID). */
  identifier: string;
  operation: ChangeOperation;
}

/** One change of one resource, with its state before (null on create) and after (null on delete). */
export interface Change {
  resource: ChangeResource;
  identifier: string;
  operation: ChangeOperation;
  before: unknown;
  after: unknown;
}

/** Who made a change. */
export interface Actor {
  origin: 'api' | 'cli' | 'system';
  userId?: string | null;
  username?: string | null;
  role?: string | null;
  /** The service provider or access point provider the user acts for. */
  actingProviderId?: string | null;
  requestId?: string | null;
}

export const CLI_ACTOR: Actor = { origin: 'cli' };
export const SYSTEM_ACTOR: Actor = { origin: 'system' };

/** The caller of a request (every write is authenticated), with the request id. */
export function actorOf(request: FastifyRequest): Actor {
  const caller = request.caller;
  return {
    origin: 'api',
    userId: caller?.userId ?? null,
    username: caller?.username ?? null,
    role: caller?.role ?? null,
    actingProviderId: caller?.serviceProviderId ?? caller?.accessPointProviderId ?? null,
    requestId: request.id,
  };
}

/** Transactions that appended a change: the app catches its caches up after they commit. */
const appendedIn = new WeakSet<Queryable>();

export const appendedChanges = (tx: Queryable) => appendedIn.has(tx);

/**
 * Appends changes to the change log inside the writing transaction `tx`: the one call every write makes. Rolled
 * back with the write; numbered (seq) and announced (NOTIFY) as the transaction commits, by the log's trigger.
 */
export async function appendChange(tx: Queryable, actor: Actor, changes: Change | readonly Change[]): Promise<void> {
  const list = Array.isArray(changes) ? changes as readonly Change[] : [changes as Change];
  if (list.length === 0) return;
  appendedIn.add(tx);
  for (let start = 0; start < list.length; start += ENTRIES_PER_INSERT) {
    await insertEntries(tx, actor, list.slice(start, start + ENTRIES_PER_INSERT));
  }
}

/**
 * Entries per insert: a participant's state carries its processes as the API shows them (document types included),
 * so a bulk import's batch as one JSON parameter would be hundreds of megabytes.
 */
const ENTRIES_PER_INSERT = 100;

async function insertEntries(tx: Queryable, actor: Actor, list: readonly Change[]): Promise<void> {
  const entries = list.map((change) => ({
    resource: change.resource,
    identifier: change.identifier,
    operation: change.operation,
    before: withoutSecrets(change.before ?? null),
    after: withoutSecrets(change.after ?? null),
    providers: change.resource === 'participant' ? providersOf(change) : [],
  }));
  await tx.query(
    `INSERT INTO change_log (resource, identifier, operation, origin, user_id, username, role, acting_provider_id,
                             request_id, service_provider_ids, before, after)
     SELECT e.resource, e.identifier, e.operation, $2, $3, $4, $5, $6, $7,
            ARRAY(SELECT jsonb_array_elements_text(e.providers))::uuid[], e.before, e.after
       FROM jsonb_to_recordset($1::jsonb)
            AS e(resource text, identifier text, operation text, providers jsonb, before jsonb, after jsonb)`,
    [JSON.stringify(entries), actor.origin, actor.userId ?? null, actor.username ?? null, actor.role ?? null,
      actor.actingProviderId ?? null, actor.requestId ?? null],
  );
}

/** The providers of a participant's states (`provider.identifier`), for the SERVICE_PROVIDER's audit scope. */
function providersOf(change: Change): string[] {
  const providerOf = (state: unknown) => (state as { provider?: { identifier?: unknown } } | null)?.provider?.identifier;
  const ids = [providerOf(change.before), providerOf(change.after)].filter((id): id is string => typeof id === 'string');
  return [...new Set(ids)];
}

const SECRET = /^(password|passwordHash|password_hash)$/i;

/** A state as JSON with every password or hash left out, however deep. */
function withoutSecrets(state: unknown): unknown {
  if (Array.isArray(state)) return state.map(withoutSecrets);
  if (state === null || typeof state !== 'object') return state;
  return Object.fromEntries(Object.entries(state)
    .filter(([key]) => !SECRET.test(key))
    .map(([key, value]) => [key, withoutSecrets(value)]));
}
