import type { Queryable } from '../db/database.js';
import type { Caller, Role } from '../http/auth.js';
import { hashPassword } from './password.js';

export async function findCredentials(db: Queryable, username: string): Promise<(Caller & { passwordHash: string }) | undefined> {
  const [user] = await db.query<Caller & { passwordHash: string }>(
    `SELECT id AS "userId", username, role, password_hash AS "passwordHash",
            service_provider_id AS "serviceProviderId", access_point_provider_id AS "accessPointProviderId"
       FROM users WHERE lower(username) = lower($1)`,
    [username],
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

export async function insertUser(db: Queryable, user: NewUser): Promise<string> {
  const [row] = await db.query<{ id: string }>(
    `INSERT INTO users (username, password_hash, role, service_provider_id, access_point_provider_id)
     VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [user.username, await hashPassword(user.password), user.role, user.serviceProviderId ?? null, user.accessPointProviderId ?? null],
  );
  return (row as { id: string }).id;
}
