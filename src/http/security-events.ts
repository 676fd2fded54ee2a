import type { FastifyRequest } from 'fastify';

/**
 * The security events, each with the message of its log line. The names are stable: operators alert on them (the
 * `event` field of the line, the `event` label of `registry_security_events_total`).
 */
const MESSAGES = {
  sign_in_failed: 'sign-in failed: wrong password or unknown user',
  sign_in_locked: 'sign-in locked: too many failed password checks of this username from this address',
  sign_in_address_locked:
    'sign-in locked for every username from this address: it holds the most locks of usernames one address may',
  sign_in_refused: 'sign-in refused: this username is locked at this address',
  password_checks_refused: 'sign-in refused: too many password checks from this address at once',
  requests_in_flight_refused: 'request refused: too many requests in flight from this address',
  feed_polls_refused: 'change feed poll refused: too many waiting polls of this user',
  sml_calls_refused: 'SML call refused: one at a time per user',
  password_changed: 'password changed',
  password_change_failed: 'password change refused: wrong current password',
  sign_in_lock_lifted: 'sign-in lock lifted',
} as const;

export type SecurityEvent = keyof typeof MESSAGES;
export const SECURITY_EVENTS = Object.keys(MESSAGES) as SecurityEvent[];

export const isSecurityEvent = (name: unknown): name is SecurityEvent =>
  typeof name === 'string' && Object.hasOwn(MESSAGES, name);

export interface SecurityEventLog {
  /**
   * One JSON log line (level warn, whatever LOG_REQUESTS says) naming the event, the username (never a password; null
   * for none, as a lock of every username; left out, the request's) and the client address, and one count; `details`
   * adds what else the event knows (the lock's end, the target user).
   */
  record(
    request: FastifyRequest,
    event: SecurityEvent,
    username?: string | null,
    details?: Record<string, unknown>,
  ): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Where the security events are logged and counted (app.ts). */
    securityEvents: SecurityEventLog;
  }
}

/** The longest username a log line carries: no user has a longer one (core/username.ts), a guesser may send any. */
const MAX_LOGGED_USERNAME = 100;

/** The username of the request's Basic credentials, when it has any (its password is never read here). */
export function claimedUsername(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || !/^basic /i.test(header)) return null;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : decoded.slice(0, Math.min(colon, MAX_LOGGED_USERNAME));
}

export function securityEventLog(count: (event: SecurityEvent) => void): SecurityEventLog {
  return {
    record(request, event, username, details = {}) {
      count(event);
      const named = username === undefined ? (request.caller?.username ?? claimedUsername(request)) : username;
      request.log.warn(
        { ...details, event, username: named?.slice(0, MAX_LOGGED_USERNAME) ?? null, clientAddress: request.ip },
        MESSAGES[event],
      );
    },
  };
}
