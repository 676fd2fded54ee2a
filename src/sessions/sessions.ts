import { utcInstant } from '../db/sql.js';
import { createHash, randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import type { Caller, SessionVerifier } from '../http/auth.js';

/** A console session ends after this long unused... */
export const SESSION_IDLE_SECONDS = 30 * 60;
/** ...and this long after it began, used or not. */
export const SESSION_MAX_SECONDS = 8 * 3600;
/** Sessions one user may hold at once (tabs, browsers); opening one more ends the oldest. */
export const SESSIONS_PER_USER = 20;
/** The last use is written at most this often: a session's requests are reads, not a write each. */
const TOUCH_SECONDS = 60;
/** Other users' ended sessions removed by one opening: more than are opened, so the table does not grow. */
const ENDED_PURGED_PER_OPENING = 100;

/** 32 random bytes, base64url: what the console keeps and sends as `Authorization: Bearer <token>`. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Only the token's hash is stored: a copy of the table opens no session. */
const hashOf = (token: string) => createHash('sha256').update(token).digest('base64url');

const LIVE = `s.expires_at > now() AND s.last_used_at > now() - make_interval(secs => ${SESSION_IDLE_SECONDS})`;

export interface OpenedSession {
  token: string;
  expiresAt: string;
}

/**
 * The password a caller was verified with, as the users table holds it now: whether it is still that one (see
 * Credentials.verifiedWith).
 */
export type StillVerified = (passwordHash: string) => boolean;

/**
 * Opens a session for `userId`, whose password must still be the one it was verified with: the user's row is locked
 * first (as a password change and a deletion lock it), so a session is either opened before such a change, which
 * then ends it, or refused after it; null when the user is gone or its password changed. The user's ended sessions
 * and its oldest beyond the bound go; other users' ended sessions too, those no other transaction holds (never waited for).
 */
export async function openSession(
  db: Database,
  userId: string,
  stillVerified: StillVerified,
): Promise<OpenedSession | null> {
  const token = randomBytes(32).toString('base64url');
  const row = await db.transaction(async (tx) => {
    const [user] = await tx.query<{ passwordHash: string }>(
      'SELECT password_hash AS "passwordHash" FROM users WHERE id = $1 FOR NO KEY UPDATE',
      [userId],
    );
    if (!user || !stillVerified(user.passwordHash)) return null;
    await tx.query(
      `DELETE FROM console_sessions WHERE token_hash IN (
         SELECT token_hash FROM console_sessions s WHERE user_id = $1 AND NOT (${LIVE})
         UNION ALL (SELECT token_hash FROM console_sessions WHERE user_id = $1 ORDER BY created_at DESC OFFSET $2))`,
      [userId, SESSIONS_PER_USER - 1],
    );
    await tx.query(
      `DELETE FROM console_sessions WHERE token_hash IN (
         SELECT token_hash FROM console_sessions s WHERE NOT (${LIVE}) LIMIT ${ENDED_PURGED_PER_OPENING} FOR UPDATE SKIP LOCKED)`,
    );
    const [opened] = await tx.query<{ expiresAt: string }>(
      `INSERT INTO console_sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
       RETURNING ${utcInstant('expires_at')} AS "expiresAt"`,
      [hashOf(token), userId, SESSION_MAX_SECONDS],
    );
    return opened as { expiresAt: string };
  });
  return row && { token, expiresAt: row.expiresAt };
}

/** When the session of `token` ends at the latest, or undefined when it has ended. */
export async function sessionExpiry(db: Queryable, token: string): Promise<string | undefined> {
  const [row] = await db.query<{ expiresAt: string }>(
    `SELECT ${utcInstant('expires_at')} AS "expiresAt" FROM console_sessions s WHERE token_hash = $1 AND ${LIVE}`,
    [hashOf(token)],
  );
  return row?.expiresAt;
}

export async function closeSession(db: Queryable, token: string): Promise<void> {
  await db.query('DELETE FROM console_sessions WHERE token_hash = $1', [hashOf(token)]);
}

/**
 * A new password ends every session of the user: whoever held the old one keeps nothing it opened. The session of
 * `kept`, the token of the request that changed its own password with the current one, goes on.
 */
export async function closeSessionsOf(tx: Queryable, userId: string, kept?: string): Promise<void> {
  await tx.query('DELETE FROM console_sessions WHERE user_id = $1 AND token_hash IS DISTINCT FROM $2', [
    userId,
    kept === undefined ? null : hashOf(kept),
  ]);
}

/** The caller of a live session's token, read from the users table as it is now (role changes apply at once). */
export function sessionVerifier(db: Queryable): SessionVerifier {
  return {
    async verify(token) {
      if (!TOKEN.test(token)) return null;
      const hash = hashOf(token);
      const [row] = await db.query<Caller & { stale: boolean }>(
        `SELECT u.id AS "userId", u.username, u.role, u.service_provider_id AS "serviceProviderId",
                u.access_point_provider_id AS "accessPointProviderId",
                s.last_used_at < now() - make_interval(secs => ${TOUCH_SECONDS}) AS stale
           FROM console_sessions s JOIN users u ON u.id = s.user_id
          WHERE s.token_hash = $1 AND ${LIVE}`,
        [hash],
      );
      if (!row) return null;
      // Best effort: while the primary is away (a standby answers the read), the session is used without its touch.
      if (row.stale)
        await db
          .query('UPDATE console_sessions SET last_used_at = now() WHERE token_hash = $1', [hash])
          .catch(() => undefined);
      const { stale: _, ...caller } = row;
      return caller;
    },
  };
}
