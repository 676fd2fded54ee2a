import { appendChange, SYSTEM_ACTOR, type Actor } from '../db/change-log.js';
import { onForeignKeyViolation, onUniqueViolation, type Queryable } from '../db/database.js';
import { deletedMeanwhile, lockRow, optionalSummaryJson } from '../db/rows.js';
import { closeSessionsOf } from '../sessions/sessions.js';
import { resourceReads } from '../db/sql.js';
import { Role, type Caller } from '../http/auth.js';
import { ConflictError } from '../core/errors.js';
import type { Sortable } from '../core/paging.js';
import { hashPassword } from './password.js';
import type { User } from './schemas.js';
import { usernameKey } from '../core/username.js';

export async function findCredentials(
  db: Queryable,
  username: string,
): Promise<(Caller & { passwordHash: string }) | undefined> {
  const [user] = await db.query<Caller & { passwordHash: string }>(
    `SELECT id AS "userId", username, role, password_hash AS "passwordHash",
            service_provider_id AS "serviceProviderId", access_point_provider_id AS "accessPointProviderId"
       FROM users WHERE lower(username COLLATE "C") = $1`,
    [usernameKey(username)],
  );
  return user;
}

export interface NewUser {
  username: string;
  password: string;
  role: Role;
  serviceProviderId?: string | null;
  accessPointProviderId?: string | null;
}

/** A user as stored: the password only as its hash. */
export interface UserRecord {
  username: string;
  role: Role;
  serviceProviderId: string | null;
  accessPointProviderId: string | null;
}

const providerDeleted = (user: UserRecord) =>
  deletedMeanwhile(user.serviceProviderId ? 'serviceProvider' : 'accessPointProvider');
const duplicate = (username: string) =>
  new ConflictError(`A user named '${username}' already exists (user names are case-insensitive)`);

/**
 * Adds a user outside the API (first start, command line, demo set), with its change log entry; `passwordHash` when
 * the password was hashed already.
 */
export async function insertUser(
  db: Queryable,
  user: NewUser,
  actor: Actor = SYSTEM_ACTOR,
  passwordHash?: string,
): Promise<string> {
  const record = {
    username: user.username,
    role: user.role,
    serviceProviderId: user.serviceProviderId ?? null,
    accessPointProviderId: user.accessPointProviderId ?? null,
  };
  const id = await insertUserRecord(db, record, passwordHash ?? (await hashPassword(user.password)));
  await appendChange(db, actor, {
    resource: 'user',
    identifier: id,
    operation: 'create',
    before: null,
    after: await getUser(db, id),
  });
  return id;
}

export async function insertUserRecord(db: Queryable, user: UserRecord, passwordHash: string): Promise<string> {
  const [row] = await onForeignKeyViolation(
    db.query<{ id: string }>(
      `INSERT INTO users (username, password_hash, role, service_provider_id, access_point_provider_id)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT ((lower(username COLLATE "C"))) DO NOTHING RETURNING id`,
      [user.username, passwordHash, user.role, user.serviceProviderId, user.accessPointProviderId],
    ),
    providerDeleted(user),
  );
  if (!row) throw duplicate(user.username);
  return row.id;
}

const FROM = `users u LEFT JOIN service_providers sp ON sp.id = u.service_provider_id
                      LEFT JOIN access_point_providers app ON app.id = u.access_point_provider_id`;
const COLUMNS = `u.id AS identifier, u.username, u.role,
  ${optionalSummaryJson('sp')} AS "serviceProvider", ${optionalSummaryJson('app')} AS "accessPointProvider"`;

export const USER_SORTABLE: Sortable = { identifier: 'u.id', username: 'lower(u.username)', role: 'u.role' };
export const USER_TIE_BREAKER = 'u.id';

export const { findAll: findUsers, getById: getUser } = resourceReads<User>({
  select: COLUMNS,
  from: FROM,
  id: 'u.id',
});

/** Changes a user; the password hash only when one is given, which ends the user's console sessions. */
export async function updateUser(
  tx: Queryable,
  id: string,
  user: UserRecord,
  passwordHash: string | undefined,
): Promise<void> {
  const [clash] = await tx.query('SELECT 1 FROM users WHERE lower(username COLLATE "C") = $1 AND id <> $2', [
    usernameKey(user.username),
    id,
  ]);
  if (clash) throw duplicate(user.username);
  await onForeignKeyViolation(
    onUniqueViolation(
      tx.query(
        `UPDATE users SET username = $2, role = $3, service_provider_id = $4, access_point_provider_id = $5,
                      password_hash = coalesce($6, password_hash)
      WHERE id = $1`,
        [id, user.username, user.role, user.serviceProviderId, user.accessPointProviderId, passwordHash ?? null],
      ),
      () => duplicate(user.username),
    ),
    providerDeleted(user),
  );
  if (passwordHash !== undefined) await closeSessionsOf(tx, id);
}

/** Sets a user's password hash, nothing else. */
export async function setPasswordHash(tx: Queryable, id: string, passwordHash: string): Promise<void> {
  await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [id, passwordHash]);
}

/**
 * 409 when the user `id` is the last ADMIN, whom nobody could replace through the API. The lock on every ADMIN
 * row makes two requests that each remove one of the last two admins run one after the other.
 */
export async function keepLastAdmin(tx: Queryable, id: string, change: 'deleted' | 'demoted'): Promise<void> {
  const admins = await tx.query<{ id: string; username: string }>(
    'SELECT id, username FROM users WHERE role = $1 FOR UPDATE',
    [Role.admin],
  );
  if (admins.length === 1 && admins[0]?.id === id) {
    throw new ConflictError(`The user '${admins[0].username}' is the last ADMIN and cannot be ${change}`);
  }
}

export async function deleteUser(tx: Queryable, id: string): Promise<void> {
  await lockRow(tx, 'users', id);
  await keepLastAdmin(tx, id, 'deleted');
  await tx.query('DELETE FROM users WHERE id = $1', [id]);
}
