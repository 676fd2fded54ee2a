import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.js';
import { Role } from '../http/auth.js';
import { insertUser } from './repository.js';

export interface FirstAdmin {
  username: string;
  /** Set only when the password was generated here and must be shown to the operator once. */
  generatedPassword?: string;
  created: boolean;
}

/**
 * Makes sure an ADMIN exists. The first one comes from REGISTRY_ADMIN_USERNAME / REGISTRY_ADMIN_PASSWORD;
 * without a password a random one is generated. An existing admin is never changed here.
 */
export async function ensureAdmin(db: Database, username: string, password: string | undefined): Promise<FirstAdmin> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('registry-first-admin:' || current_schema()))`);
    const admins = await tx.query(`SELECT 1 FROM users WHERE role = $1 LIMIT 1`, [Role.admin]);
    if (admins.length > 0) return { username, created: false };
    const generatedPassword = password ? undefined : randomBytes(18).toString('base64url');
    await insertUser(tx, { username, password: password ?? (generatedPassword as string), role: Role.admin });
    return { username, generatedPassword, created: true };
  });
}
