import { appendChange, type Actor } from '../db/change-log.js';
import type { Database, Queryable } from '../db/database.js';
import { Conditions, selectPage } from '../db/sql.js';
import { coalesced } from '../core/concurrency.js';
import { NotFoundError } from '../core/errors.js';
import type { PageRequest, Sortable } from '../core/paging.js';
import type { PairLock, SignInLock } from './sign-in-throttle.js';
import type { SignInLockView } from './schemas.js';
import { usernameKey } from '../core/username.js';

/**
 * The sign-in locks in force, in the database (migrations 030, 072): every instance refuses a locked pair, however many
 * share the database, and the authority reads one list from any of them. A lock is state, not history: it is kept
 * while it is in force and dropped after, and it reaches the other instances by a notification of its own, never
 * through the change log. Only an ADMIN's lift, an authenticated act, is appended to the change log, which tells every
 * instance. The database is the truth, each throttle a copy.
 */

const INSTANT = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const VIEW = `l.id AS identifier, l.username, l.client_address AS "clientAddress",
  ${INSTANT('l.locked_at')} AS "lockedAt", ${INSTANT('l.locked_until')} AS "lockedUntil"`;
const IN_FORCE = 'l.locked_until > now()';

/** The channel a stored lock is announced on, its id the payload. */
const LOCKS_CHANNEL = 'registry_sign_in_locks';
/** How often each instance reads the locks in force again and drops the ended ones, unless told otherwise. */
export const LOCK_POLL_MS = 10_000;
/** SIGN_IN_MAX_LOCKS_PER_ADDRESS's default. */
export const MAX_LOCKS_PER_ADDRESS = 3;

export const SIGN_IN_LOCK_SORTABLE: Sortable = {
  username: 'l.username_key',
  clientAddress: 'l.client_address',
  lockedAt: 'l.locked_at',
  lockedUntil: 'l.locked_until',
};
export const SIGN_IN_LOCK_TIE_BREAKER = 'l.id';

const asThrottleLock = (view: SignInLockView): SignInLock => ({
  id: view.identifier,
  username: view.username ?? undefined,
  address: view.clientAddress,
  until: Date.parse(view.lockedUntil),
});

/** Ended locks refuse nothing any more: they go. */
const dropEndedLocks = (db: Queryable) => db.query(`DELETE FROM sign_in_locks l WHERE NOT (${IN_FORCE})`);

/** What refuses the pair once a lock is stored: its own lock, or its address's (`addressLocked` when this store made that). */
export interface StoredLock {
  lock: SignInLock;
  addressLocked: boolean;
}

/**
 * Stores a lock the throttle made (one of the pair replaces the pair's ended one) and announces it. An address holds at
 * most `maxPerAddress` locks of usernames: a lock of one more locks the address as a whole instead, and while that
 * holds nothing more of the address is stored. So one address costs at most `maxPerAddress` + 1 rows and notifications
 * in a lock's time, however many usernames it tries. Ended locks are dropped on the way: they refuse nothing any more.
 */
export async function storeLock(db: Database, lock: PairLock, maxPerAddress: number): Promise<StoredLock> {
  return db.transaction(async (tx) => {
    // One store at a time, on every instance: two of one address cannot both pass its bound.
    await tx.query('LOCK TABLE sign_in_locks IN SHARE ROW EXCLUSIVE MODE');
    await dropEndedLocks(tx);
    const held = await tx.query<SignInLockView & { usernameKey: string | null }>(
      `SELECT ${VIEW}, l.username_key AS "usernameKey" FROM sign_in_locks l WHERE l.client_address = $1`,
      [lock.address],
    );
    const whole = held.find((view) => view.usernameKey === null);
    if (whole) return { lock: asThrottleLock(whole), addressLocked: false };
    const key = usernameKey(lock.username);
    const addressLocked = held.filter((view) => view.usernameKey !== key).length >= maxPerAddress;
    const [stored] = addressLocked
      ? await tx.query<SignInLockView>(
          `INSERT INTO sign_in_locks AS l (client_address, locked_until) VALUES ($1, to_timestamp($2::float8 / 1000)) RETURNING ${VIEW}`,
          [lock.address, lock.until],
        )
      : await tx.query<SignInLockView>(
          `INSERT INTO sign_in_locks AS l (username, username_key, client_address, locked_until)
         VALUES ($1, $2, $3, to_timestamp($4::float8 / 1000))
         ON CONFLICT (username_key, client_address) DO UPDATE
           SET username = excluded.username, locked_at = now(), locked_until = excluded.locked_until
         RETURNING ${VIEW}`,
          [lock.username, key, lock.address, lock.until],
        );
    const view = stored as SignInLockView;
    // Delivered at commit to every instance listening, this one too.
    await tx.query('SELECT pg_notify($1, $2)', [LOCKS_CHANNEL, view.identifier]);
    return { lock: asThrottleLock(view), addressLocked };
  });
}

/** The lock `id` while it is in force; undefined once it has ended or was lifted. */
async function lockInForce(db: Queryable, id: string): Promise<SignInLock | undefined> {
  const [view] = await db.query<SignInLockView>(`SELECT ${VIEW} FROM sign_in_locks l WHERE l.id = $1 AND ${IN_FORCE}`, [
    id,
  ]);
  return view && asThrottleLock(view);
}

/**
 * Every lock in force (bounded by the password checks they cost, and by `maxPerAddress` + 1 an address), those ending
 * first first: a throttle drops its ended locks from the oldest on.
 */
async function locksInForce(db: Queryable): Promise<SignInLock[]> {
  return (
    await db.query<SignInLockView>(`SELECT ${VIEW} FROM sign_in_locks l WHERE ${IN_FORCE} ORDER BY l.locked_until`)
  ).map(asThrottleLock);
}

export interface LockFollowing {
  /** How often the locks in force are read again and the ended ones dropped; LOCK_POLL_MS by default. */
  pollMs?: number;
  /** An announced lock that could not be read. */
  onError: (error: unknown) => void;
}

/**
 * Hands `hold` every lock stored anywhere: those in force at the start, each later one as its notification comes, and
 * all in force again after the notifications' connection was lost and at every poll (so a notification lost unnoticed
 * delays a lock by a poll at most). The poll also drops the ended locks: no username a guesser sent outlasts its lock
 * by more than a poll. Resolves once following, to the function that stops it.
 */
export async function followLocks(
  db: Database,
  hold: (lock: SignInLock) => void,
  options: LockFollowing,
): Promise<() => Promise<void>> {
  const all = coalesced(async () => {
    for (const lock of await locksInForce(db)) hold(lock);
  });
  const readAll = () => void all.run().catch(options.onError);
  const readOne = (id: string) => void lockInForce(db, id).then((lock) => lock && hold(lock), options.onError);
  const stopListening = await db.listen(LOCKS_CHANNEL, (id) => (id ? readOne(id) : readAll()));
  try {
    await all.run();
  } catch (error) {
    await stopListening();
    throw error;
  }
  // A poll that fails (the database away) is made good by the next.
  const poll = setInterval(
    () =>
      void dropEndedLocks(db)
        .then(() => all.run())
        .catch(() => undefined),
    options.pollMs ?? LOCK_POLL_MS,
  );
  poll.unref();
  return async () => {
    clearInterval(poll);
    await stopListening();
    await all.settled();
  };
}

/** A page of the locks in force, those of one username (any letter case) when it is given. */
export function findLocks(db: Queryable, page: PageRequest, username?: string) {
  const conditions = new Conditions().where(IN_FORCE);
  if (username !== undefined) conditions.where(`l.username_key = ${conditions.param(usernameKey(username))}`);
  return selectPage<SignInLockView>(db, { select: VIEW, from: 'sign_in_locks l', conditions, page });
}

/**
 * Lifts the lock `id`, with its change: the one act on locks the change log keeps (an ADMIN's). Returns it; the 404 of
 * an unknown identifier when no such lock is in force.
 */
export async function liftLock(tx: Queryable, id: string, actor: Actor): Promise<SignInLockView> {
  const [lifted] = await tx.query<SignInLockView & { inForce: boolean }>(
    `DELETE FROM sign_in_locks l WHERE l.id = $1 RETURNING ${VIEW}, ${IN_FORCE} AS "inForce"`,
    [id],
  );
  // An ended lock refuses nothing: there is nothing to lift (and the transaction's rollback keeps it for the next store).
  if (!lifted?.inForce) throw NotFoundError.instance(id);
  const { inForce: _, ...lock } = lifted;
  await appendChange(tx, actor, {
    resource: 'sign-in-lock',
    identifier: id,
    operation: 'delete',
    before: lock,
    after: null,
  });
  return lock;
}
