import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.js';
import { Role } from '../http/auth.js';
import { passwordProblem } from './password-rules.js';
import { insertUser } from './repository.js';
import { usernameProblem } from '../core/username.js';

/** REGISTRY_ADMIN_USERNAME or _PASSWORD is one no user may have: the operator sets another before the first start. */
export class FirstAdminError extends Error {}

function refusal(username: string, password: string | undefined): string | undefined {
  const badName = usernameProblem(username);
  if (badName) return `REGISTRY_ADMIN_USERNAME ${badName}`;
  const badPassword = password === undefined ? undefined : passwordProblem(password, username);
  return badPassword && `REGISTRY_ADMIN_PASSWORD ${badPassword}: set another, or unset it to have one generated`;
}

export interface FirstAdmin {
  username: string;
  /** Set only when the password was generated here and must be shown to the operator once. */
  generatedPassword?: string;
  created: boolean;
}

/**
 * Makes sure an ADMIN exists. The first one comes from REGISTRY_ADMIN_USERNAME / REGISTRY_ADMIN_PASSWORD;
 * without a password a random one is generated. An existing admin is never changed here, so settings refused by
 * today's rules stop only the start that would use them.
 */
export async function ensureAdmin(db: Database, username: string, password: string | undefined): Promise<FirstAdmin> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('registry-first-admin:' || current_schema()))`);
    const admins = await tx.query(`SELECT 1 FROM users WHERE role = $1 LIMIT 1`, [Role.admin]);
    if (admins.length > 0) return { username, created: false };
    const refused = refusal(username, password);
    if (refused) throw new FirstAdminError(`${refused}.`);
    const generatedPassword = password ? undefined : randomBytes(18).toString('base64url');
    await insertUser(tx, { username, password: password ?? (generatedPassword as string), role: Role.admin });
    return { username, generatedPassword, created: true };
  });
}
