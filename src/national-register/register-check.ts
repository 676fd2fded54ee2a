import { randomUUID } from 'node:crypto';
import { SYSTEM_ACTOR } from '../db/change-log.js';
import type { Database } from '../db/database.js';
import { TooManyRequestsError, ValidationError } from '../core/errors.js';
import type { CheckedOrganization, OrganizationCheck } from '../participants/organization-check.js';
import { valueFaultOf } from '../participants/value-rules.js';
import {
  nationalRegisterClient,
  type NationalRegister,
  type NationalRegisterOptions,
  type RegisterAnswer,
} from './client.js';
import {
  addUnasked,
  holdRecheckLease,
  nextDue,
  NORWEGIAN_ICD,
  postponeCheck,
  recordAnswers,
  releaseRecheckLease,
} from './checks.js';

interface Checked extends CheckedOrganization {
  answer: RegisterAnswer;
}

const refusal = (objectName: string, organizationIdentifier: string, defaultMessage: string) =>
  ValidationError.of(objectName, [
    {
      field: 'organizationIdentifier',
      code: 'NationalRegister',
      rejectedValue: organizationIdentifier,
      defaultMessage,
    },
  ]);

/**
 * New Norwegian participants (ICD 0192) against Enhetsregisteret: an organization it does not know, or has deleted, is
 * refused; one it does not answer for in time is accepted and marked `unconfirmed`, for the re-check to ask first
 * (docs/design/participants.md, "Enhetsregisteret"). Other ICDs are not asked about.
 */
export function registerCheck(register: NationalRegister, recheckAfterSeconds: number): OrganizationCheck {
  return {
    async check(organization, client, objectName) {
      if (organization.icd !== NORWEGIAN_ICD) return undefined;
      const number = organization.organizationIdentifier;
      // Not an organization number by the ICD's rule: the write refuses it in the rule's words (or, with the value
      // checks off, records its fault); the register is not asked about it.
      if (valueFaultOf(NORWEGIAN_ICD, number) !== undefined) return undefined;
      const answer = await register.lookup(number, client);
      if (answer === 'busy') {
        throw new TooManyRequestsError(
          1,
          'Too many organization numbers are being looked up in Enhetsregisteret for you at once; try again in a second',
        );
      }
      if (answer.kind === 'unknown')
        throw refusal(objectName, number, `Enhetsregisteret has no organization ${number}`);
      if (answer.kind === 'deleted') {
        const when = answer.deletedOn ? ` on ${answer.deletedOn}` : '';
        throw refusal(objectName, number, `Enhetsregisteret deleted organization ${number}${when}`);
      }
      return { ...organization, answer } satisfies Checked;
    },
    record: (tx, actor, checked) =>
      recordAnswers(
        tx,
        actor,
        (checked as Checked[]).map(({ organizationIdentifier, answer }) => ({ organizationIdentifier, answer })),
        recheckAfterSeconds,
      ),
  };
}

export interface RecheckOptions {
  /** Lookups a minute, over every instance (NATIONAL_REGISTER_RECHECK_PER_MINUTE); 0: no re-check. */
  perMinute: number;
  /** An organization is asked again this long after the register's last answer (NATIONAL_REGISTER_RECHECK_AFTER_HOURS). */
  afterSeconds: number;
  /** An organization the register did not answer for is asked again after this long. */
  retrySeconds?: number;
  onError?: (error: unknown) => void;
}

export interface Recheck {
  start(): Promise<void>;
  stop(): Promise<void>;
}

const RECHECK_CLIENT = 'recheck';
const DEFAULT_RETRY_SECONDS = 300;

/**
 * The periodic re-check of the Norwegian organizations of live participants: one organization per step, one step per
 * 60 / perMinute seconds, on the one instance holding the lease (the others try to take it at each step, and do once
 * the holder stops). An organization the register has deleted, or does not know, is flagged; one it knows again is
 * cleared. Organizations never asked are added at the start and asked first.
 */
export function nationalRegisterRecheck(db: Database, register: NationalRegister, options: RecheckOptions): Recheck {
  const me = randomUUID();
  const everyMs = Math.max(60_000 / Math.max(options.perMinute, 1), 10);
  const leaseMs = Math.max(everyMs * 3, 30_000);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  /** The next organization due, asked and recorded, if this instance holds the lease. */
  const step = async () => {
    if (!(await holdRecheckLease(db, me, leaseMs))) return;
    const due = await nextDue(db);
    if (due === undefined) return;
    const { organization, live } = due;
    if (!live) return void (await postponeCheck(db, organization, options.afterSeconds));
    // The register is asked, not the answers kept for registrations: a re-check is for what changed since.
    const answer = await register.lookup(organization, RECHECK_CLIENT, { fresh: true });
    if (answer === 'busy' || answer.kind === 'unanswered') {
      await postponeCheck(db, organization, options.retrySeconds ?? DEFAULT_RETRY_SECONDS);
      return;
    }
    await db.transaction((tx) =>
      recordAnswers(tx, SYSTEM_ACTOR, [{ organizationIdentifier: organization, answer }], options.afterSeconds),
    );
  };
  const tick = () => {
    running = step()
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, everyMs);
      });
  };
  return {
    async start() {
      if (options.perMinute <= 0) return;
      await addUnasked(db).catch((error: unknown) => options.onError?.(error));
      timer = setTimeout(tick, everyMs);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await releaseRecheckLease(db, me).catch(() => undefined);
    },
  };
}

/** Enhetsregisteret as the application uses it: its client's bounds and the re-check's pace. */
export interface NationalRegisterSettings extends NationalRegisterOptions {
  recheckPerMinute: number;
  recheckAfterSeconds: number;
  recheckRetrySeconds?: number;
}

/** The check of new participants and the re-check of the others, on one client (one set of bounds, one memory of answers). */
export function nationalRegisterOf(
  db: Database,
  settings: NationalRegisterSettings,
  onError: (error: unknown) => void,
) {
  const register = nationalRegisterClient(settings);
  return {
    check: registerCheck(register, settings.recheckAfterSeconds),
    recheck: nationalRegisterRecheck(db, register, {
      perMinute: settings.recheckPerMinute,
      afterSeconds: settings.recheckAfterSeconds,
      retrySeconds: settings.recheckRetrySeconds,
      onError,
    }),
  };
}
