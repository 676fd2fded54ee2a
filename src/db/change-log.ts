import { createHash } from 'node:crypto';
import { afterCommit, CHANGE_LOG_STATES_MISSING, sendsAhead, sentAhead, type Queryable } from './database.js';
import { errorCodeOf } from '../core/errors.js';
import { isRecord } from '../core/json.js';
import { coalesced } from '../core/concurrency.js';

export type ChangeResource =
  | 'participant'
  | 'process'
  | 'document-type'
  | 'access-point'
  | 'access-point-provider'
  | 'service-provider'
  | 'transport-profile'
  | 'capability'
  | 'user'
  | 'sign-in-lock'
  | 'register-flag'
  | 'identifier-scheme'
  | 'removal-notice';

/** Resources a service provider's feed shows: theirs by the `provider` of their states (`service_provider_ids`). */
export const PROVIDER_RESOURCES: readonly ChangeResource[] = ['participant', 'removal-notice'];
type ChangeOperation = 'create' | 'update' | 'delete' | 'transfer' | 'expire' | 'migrate' | 'withdraw';

/** What a cache hears of a committed change: db/change-signal.ts tells every subscriber each one, in log order, once. */
export interface ChangeNotice {
  /** The change log entry's position (monotonic). */
  seq: number;
  resource: ChangeResource;
  /** Participants: `iso6523-actorid-upis::{icd}:{organizationIdentifier}` as stored; else the id (UUID). */
  identifier: string;
  operation: ChangeOperation;
  /** Who made it (the log's user and the provider they acted for): whose reads must see it (read-your-writes). */
  userId?: string | null;
  actingProviderId?: string | null;
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

/** Transactions that appended a change: the app catches its caches up after they commit. */
const appendedIn = new WeakSet<Queryable>();

export const appendedChanges = (tx: Queryable) => appendedIn.has(tx);

/**
 * Appends changes to the change log inside the writing transaction `tx`: the one call every write makes. Rolled
 * back with the write; numbered (seq) and announced (NOTIFY) once it has committed (migration 016).
 */
export async function appendChange(tx: Queryable, actor: Actor, changes: Change | readonly Change[]): Promise<void> {
  const list = [changes].flat();
  if (list.length === 0) return;
  appendedIn.add(tx);
  // A failure leaves the entries to the next numbering (every instance's change signal numbers too).
  afterCommit(tx, 'number changes', (db) => numberCommitted(db).catch(() => undefined));
  for (let start = 0; start < list.length; start += ENTRIES_PER_INSERT) {
    await insertEntries(tx, actor, list.slice(start, start + ENTRIES_PER_INSERT));
  }
}

/**
 * Gives every committed entry not yet numbered its position, in insertion order, and announces them (NOTIFY): one
 * short transaction, serialized with the other instances' (migration 016).
 */
export async function numberChanges(db: Queryable): Promise<void> {
  await db.query('SELECT change_log_sequence()');
}

const numberings = new WeakMap<Queryable, ReturnType<typeof coalesced>>();

/**
 * `numberChanges` after a commit: one run at a time on each database, the writers that commit meanwhile sharing the
 * next. Runs are serialized in the database anyway (migration 016); a writer each queued behind the lock, with its own
 * round trip and transaction, cost more than half the rate of concurrent writes.
 */
function numberCommitted(db: Queryable): Promise<void> {
  let numbering = numberings.get(db);
  if (!numbering) numberings.set(db, (numbering = coalesced(() => numberChanges(db))));
  return numbering.run();
}

/** Entries per insert: with the processes named by hash, a participant's state is well under a kilobyte. */
const ENTRIES_PER_INSERT = 1000;

async function insertEntries(tx: Queryable, actor: Actor, list: readonly Change[]): Promise<void> {
  const processStates = new ProcessStates();
  const stateOf = (change: Change, state: unknown) =>
    change.resource === 'participant' ? processStates.named(state) : withoutSecrets(state ?? null);
  const entries = list.map((change) => ({
    resource: change.resource,
    identifier: change.identifier,
    operation: change.operation,
    before: stateOf(change, change.before),
    after: stateOf(change, change.after),
    providers: PROVIDER_RESOURCES.includes(change.resource) ? providersOf(change) : [],
  }));
  const params = [
    JSON.stringify(entries),
    actor.origin,
    actor.userId ?? null,
    actor.username ?? null,
    actor.role ?? null,
    actor.actingProviderId ?? null,
    actor.requestId ?? null,
  ];
  // In a transaction the states believed stored are left out, and the insert is not waited for: when one is missing,
  // the insert fails, and so the transaction, which runs again with every state sent.
  const believed = sendsAhead(tx);
  const insert = tx.query(INSERT_ENTRIES, [
    ...params,
    processStates.json({ unlessStored: believed }),
    processStates.namedHashes(),
  ]);
  await sentAhead(
    tx,
    insert.then(
      () => processStates.remember(),
      (error: unknown) => {
        if (errorCodeOf(error) === CHANGE_LOG_STATES_MISSING) statesStored.clear();
        throw error;
      },
    ),
  );
}

/**
 * Inserts the entries ($1, by $2…$7) and the process states they name ($9) that the database lacks, from those sent
 * ($8). When a state named is neither stored nor sent, it fails with CHANGE_LOG_STATES_MISSING (migration 071).
 */
const INSERT_ENTRIES = `WITH sent AS (SELECT s.hash, s.state FROM jsonb_to_recordset($8::jsonb) AS s(hash text, state jsonb)),
  states AS (
    INSERT INTO change_log_process_states (hash, state)
    SELECT s.hash, s.state FROM sent s WHERE NOT EXISTS (SELECT 1 FROM change_log_process_states x WHERE x.hash = s.hash)),
  missing AS (
    SELECT named.hash FROM unnest($9::text[]) AS named(hash)
     WHERE NOT EXISTS (SELECT 1 FROM change_log_process_states x WHERE x.hash = named.hash)
       AND NOT EXISTS (SELECT 1 FROM sent s WHERE s.hash = named.hash)),
  logged AS (
    INSERT INTO change_log (resource, identifier, operation, origin, user_id, username, role, acting_provider_id,
                            request_id, service_provider_ids, before, after)
    SELECT e.resource, e.identifier, e.operation, $2, $3, $4, $5, $6, $7,
           ARRAY(SELECT jsonb_array_elements_text(e.providers))::uuid[], e.before, e.after
      FROM jsonb_to_recordset($1::jsonb)
           AS e(resource text, identifier text, operation text, providers jsonb, before jsonb, after jsonb))
  SELECT change_log_states_required(count(*)) FROM missing`;

/**
 * Hashes of process states a database has stored, as this process last saw: their states are not sent again (some
 * 11 kB each). A belief, not the truth: another database, a rollback or a failover that lost them makes the insert
 * find them missing and ask for them. Forgotten all at once when full.
 */
const statesStored = new Set<string>();
const STATES_REMEMBERED = 10_000;

/** A process state as the log keeps it: its hash, and the JSON of `{ hash, state }` the insert reads. */
interface NamedState {
  hash: string;
  json: string;
}

/**
 * The named states of the catalogue's held processes, by object: they are deep-frozen (src/catalogue-cache), so a
 * process's state is hashed once per catalogue version rather than once per participant change.
 */
const heldStates = new WeakMap<object, NamedState>();

function namedState(process: unknown): NamedState {
  const held = isRecord(process) && Object.isFrozen(process) ? process : undefined;
  const known = held && heldStates.get(held);
  if (known) return known;
  const state = withoutSecrets(process);
  const hash = createHash('sha256').update(JSON.stringify(state)).digest('base64url');
  const named = { hash, json: JSON.stringify({ hash, state }) };
  if (held) heldStates.set(held, named);
  return named;
}

/**
 * The process states of participants' states, each kept once (change_log_process_states, migration 014): a participant
 * names its processes by the hash of their state (`processStates`), and `change_log_state` puts them back where the log
 * is read. An import's entries share a handful of processes, each some 11 kB with its document types.
 */
class ProcessStates {
  private readonly hashes = new Map<unknown, string>();
  private readonly states = new Map<string, string>();

  /** The participant state without secrets, its processes (when it has them) replaced by `processStates`. */
  named(state: unknown): unknown {
    if (!isRecord(state) || !Array.isArray(state.processes)) return withoutSecrets(state ?? null);
    const { processes, ...rest } = state;
    return { ...withoutSecretFields(rest), processStates: processes.map((process) => this.hashOf(process)) };
  }

  /** The states named (with `unlessStored`, those not believed stored), as the JSON array of `{ hash, state }` the insert reads. */
  json({ unlessStored }: { unlessStored: boolean }): string {
    return `[${[...this.states]
      .filter(([hash]) => !(unlessStored && statesStored.has(hash)))
      .map(([, json]) => json)
      .join(',')}]`;
  }

  /** The hashes of the states named. */
  namedHashes(): string[] {
    return [...this.states.keys()];
  }

  /** The states named are stored now: the insert found or stored them. */
  remember(): void {
    if (statesStored.size + this.states.size > STATES_REMEMBERED) statesStored.clear();
    for (const hash of this.states.keys()) statesStored.add(hash);
  }

  /** Known by reference first: a batch's participants share the catalogue's process objects. */
  private hashOf(process: unknown): string {
    const known = this.hashes.get(process);
    if (known !== undefined) return known;
    const { hash, json } = namedState(process);
    this.hashes.set(process, hash);
    this.states.set(hash, json);
    return hash;
  }
}

/** The providers of a participant's or notice's states (`provider.identifier`), for the SERVICE_PROVIDER's audit scope. */
function providersOf(change: Change): string[] {
  const providerOf = (state: unknown) =>
    isRecord(state) && isRecord(state.provider) ? state.provider.identifier : undefined;
  const ids = [providerOf(change.before), providerOf(change.after)].filter(
    (id): id is string => typeof id === 'string',
  );
  return [...new Set(ids)];
}

const SECRET = /^(password|passwordHash|password_hash)$/i;

/** A state as JSON with every password or hash left out, however deep. */
function withoutSecrets(state: unknown): unknown {
  if (Array.isArray(state)) return state.map(withoutSecrets);
  return isRecord(state) ? withoutSecretFields(state) : state;
}

function withoutSecretFields(state: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(state)
      .filter(([key]) => !SECRET.test(key))
      .map(([key, value]) => [key, withoutSecrets(value)]),
  );
}
