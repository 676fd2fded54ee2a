import type { Actor } from '../db/change-log.js';
import type { Queryable } from '../db/database.js';

/** What a check found of one organization, to be recorded with its new participant. */
export interface CheckedOrganization {
  icd: string;
  organizationIdentifier: string;
}

/**
 * A check of a new participant's organization against a register outside the registry (src/national-register/ is
 * one), made before the participant's transaction so that no transaction waits for the register. The routes and the
 * import ask it; the application wires one in, or none.
 */
export interface OrganizationCheck {
  /**
   * Throws the refusal (a ValidationError of `objectName` at `organizationIdentifier`, or a 429 when `client` asks too
   * much at once); else what to record once the participant is stored, or undefined when there is nothing to record.
   */
  check(
    organization: CheckedOrganization,
    client: string,
    objectName: string,
  ): Promise<CheckedOrganization | undefined>;
  /** Records what the checks found of the participants just stored, in their transaction. */
  record(tx: Queryable, actor: Actor, checked: readonly CheckedOrganization[]): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The check of new participants' organizations; undefined: none (NATIONAL_REGISTER_URL unset). */
    organizationCheck: OrganizationCheck | undefined;
  }
}
