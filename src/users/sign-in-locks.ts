import { appendChange, type Actor } from '../db/change-log.js';
import type { Database, Queryable } from '../db/database.js';
import { Conditions, selectPage } from '../db/sql.js';
import { NotFoundError } from '../core/errors.js';
import type { PageRequest, Sortable } from '../core/paging.js';
import type { SignInLock } from './login-throttle.js';
import type { SignInLockView } from './schemas.js';
import { usernameKey } from './username.js';

/**
 * The sign-in locks in force, in the database (migration 030): every instance refuses a locked pair, however many
 * share the database, and the authority reads one list from any of them. A lock or a lift is appended to the change
 * log, which tells every instance's throttle (credentials.ts); the database is the truth, each throttle a copy.
 */

const INSTANT = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const VIEW = `l.id AS identifier, l.username, l.client_address AS "clientAddress",
  ${INSTANT('l.locked_at')} AS "lockedAt", ${INSTANT('l.locked_until')} AS "lockedUntil"`;
const IN_FORCE = 'l.locked_until > now()';

export const SIGN_IN_LOCK_SORTABLE: Sortable = {
  username: 'l.username_key', clientAddress: 'l.client_address', lockedAt: 'l.locked_at', lockedUntil: 'l.locked_until',
};
export const SIGN_IN_LOCK_TIE_BREAKER = 'l.id';

const asThrottleLock = (view: SignInLockView): SignInLock =>
  ({ id: view.identifier, username: view.username, address: view.clientAddress, until: Date.parse(view.lockedUntil) });

/**
 * Stores a lock the throttle made (one of the pair replaces the pair's ended one), with its change, and returns it with
 * its id. Ended locks are dropped on the way: they refuse nothing any more.
 */
export async function storeLock(db: Database, lock: SignInLock, actor: Actor): Promise<SignInLock> {
  return db.transaction(async (tx) => {
    await tx.query(`DELETE FROM sign_in_locks l WHERE NOT (${IN_FORCE})`);
    const [stored] = await tx.query<SignInLockView>(
      `INSERT INTO sign_in_locks AS l (username, username_key, client_address, locked_until)
       VALUES ($1, $2, $3, to_timestamp($4::float8 / 1000))
       ON CONFLICT (username_key, client_address) DO UPDATE
         SET username = excluded.username, locked_at = now(), locked_until = excluded.locked_until
       RETURNING ${VIEW}`,
      [lock.username, usernameKey(lock.username), lock.address, lock.until],
    );
    const view = stored as SignInLockView;
    await appendChange(tx, actor, { resource: 'sign-in-lock', identifier: view.identifier, operation: 'create', before: null, after: view });
    return asThrottleLock(view);
  });
}

/** The lock `id` while it is in force; undefined once it has ended or was lifted. */
export async function lockInForce(db: Queryable, id: string): Promise<SignInLock | undefined> {
  const [view] = await db.query<SignInLockView>(`SELECT ${VIEW} FROM sign_in_locks l WHERE l.id = $1 AND ${IN_FORCE}`, [id]);
  return view && asThrottleLock(view);
}

/** Every lock in force, for a throttle that starts. */
export async function locksInForce(db: Queryable): Promise<SignInLock[]> {
  return (await db.query<SignInLockView>(`SELECT ${VIEW} FROM sign_in_locks l WHERE ${IN_FORCE}`)).map(asThrottleLock);
}

/** A page of the locks in force, those of one username (any letter case) when it is given. */
export function findLocks(db: Queryable, page: PageRequest, username?: string) {
  const conditions = new Conditions().where(IN_FORCE);
  if (username !== undefined) conditions.where(`l.username_key = ${conditions.param(usernameKey(username))}`);
  return selectPage<SignInLockView>(db, { select: VIEW, from: 'sign_in_locks l', conditions, page });
}

/** Lifts the lock `id`, with its change, and returns it; the 404 of an unknown identifier when no such lock is in force. */
export async function liftLock(tx: Queryable, id: string, actor: Actor): Promise<SignInLockView> {
  const [lifted] = await tx.query<SignInLockView & { inForce: boolean }>(
    `DELETE FROM sign_in_locks l WHERE l.id = $1 RETURNING ${VIEW}, ${IN_FORCE} AS "inForce"`, [id]);
  // An ended lock refuses nothing: there is nothing to lift (and the transaction's rollback keeps it for the next store).
  if (!lifted?.inForce) throw NotFoundError.instance(id);
  const { inForce: _, ...lock } = lifted;
  await appendChange(tx, actor, { resource: 'sign-in-lock', identifier: id, operation: 'delete', before: lock, after: null });
  return lock;
}
