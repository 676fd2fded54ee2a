import type { Queryable } from '../db/database.js';
import { parseOrganization } from '../participants/identifiers.js';
import { participantIsLive, participantPublishes } from '../participants/repository.js';
import { isSpis } from '../participants/service-provider-identifiers.js';
import type { DeliveryTarget } from './outbox.js';
import { DirectoryError, type DirectoryClient } from './directory-client.js';
import {
  forgetMigrationKey,
  forgetPushed,
  forgetSml,
  heldForThisSmp,
  recordDirectoryRefusal,
  recordPushed,
  recordSml,
  smlRecordOf,
  smlStateOf,
  wasPushed,
} from './network.js';
import { SmlError, type SmlClient } from './sml-client.js';

/** Whether the organization has a live participant with something publishable (its processes not all removed). */
async function organizationIsLive(db: Queryable, participant: string): Promise<boolean> {
  const organization = parseOrganization(participant);
  if (!organization) return false;
  const [row] = await db.query(
    `SELECT 1 FROM participants pa WHERE pa.icd = $1 AND pa.organization_identifier = $2 AND ${participantIsLive('pa')}
        AND ${participantPublishes('pa')} LIMIT 1`,
    [organization.icd, organization.organizationIdentifier],
  );
  return row !== undefined;
}

/**
 * The SML: registered when the organization has its first live participant, deleted when the last one goes or has
 * nothing publishable left (every process or document type past its removal instant: removals.ts announces it).
 */
export const smlTarget = (sml: SmlClient): DeliveryTarget => ({
  name: 'sml',
  deliver: (db, participant, operation) => deliverToSml(db, sml, participant, operation),
});

/**
 * The Peppol Directory: every change of a participant pushed (PUT), the organization deleted with its last one.
 * With `after: 'sml'` an entry is pushed only once the SML has it, since the Directory looks a pushed
 * participant up through the SML, and only while the SML holds it for this SMP (not one another SMP holds).
 * Only what was pushed is deleted. A refusal no retry can cure (a 4xx) is recorded for the organization. A service
 * provider's own identifier (0242, its MLS address) is never pushed: the Directory lists end users, not providers.
 */
export const directoryTarget = (directory: DirectoryClient, after?: string): DeliveryTarget => ({
  name: 'directory',
  ...(after === undefined ? {} : { after }),
  async deliver(db, participant) {
    if (isSpis(parseOrganization(participant)?.icd ?? '')) return false;
    try {
      if (await organizationIsLive(db, participant)) {
        if (after !== undefined && !heldForThisSmp(await smlStateOf(db, participant))) return false;
        await directory.put(participant);
        await recordPushed(db, participant);
        return true;
      }
      if (!(await wasPushed(db, participant))) return false;
      await directory.delete(participant);
      await forgetPushed(db, participant);
      return true;
    } catch (error) {
      if (!(error instanceof DirectoryError && error.final)) throw error;
      await recordDirectoryRefusal(db, participant, error);
      return true;
    }
  },
});

/** The SML's refusal that no retry can cure; anything else (a retry can cure it) is thrown again. */
function refusalOf(error: unknown): SmlError {
  if (error instanceof SmlError && error.final) return error;
  throw error;
}

async function deliverToSml(db: Queryable, sml: SmlClient, participant: string, operation?: string): Promise<boolean> {
  const { state, migrationKey } = await smlRecordOf(db, participant);
  const live = await organizationIsLive(db, participant);
  // One migrating out is served as usual, registered, until another SMP has migrated it (sml-reconcile ends it).
  const ours = heldForThisSmp(state);
  // The change a migration key logged, whose key an earlier delivery already used: the SML's answer to it is recorded,
  // and a Create now would be refused as held elsewhere over the key's own refusal.
  if (live && !ours && operation === 'migrate' && migrationKey === undefined) return false;
  if (live && !ours) await registerInSml(db, sml, participant, migrationKey);
  else if (!live && ours) await deleteFromSml(db, sml, participant);
  else {
    if (!live && state !== undefined) await forgetSml(db, participant);
    return false;
  }
  return true;
}

/**
 * Registers the organization in the SML: Migrate with `key`, the one its provider gave (taking it over from
 * another SMP), else Create. A refusal of Create with BadRequestFault, or of Migrate, is of an answer that was lost when
 * the SML's List shows the organization under this SMP's ID; else a Create of one that "already exist[s]"
 * (ERR-106) is of one another SMP holds; any other refusal no retry can cure is recorded as refused (a wrong
 * migration key among them: it is not tried again). Each refusal is recorded, and the cursor goes on.
 */
export async function registerInSml(db: Queryable, sml: SmlClient, participant: string, key?: string): Promise<void> {
  const refusal = await (key === undefined ? sml.create(participant) : sml.migrate(participant, key)).then(
    () => undefined,
    refusalOf,
  );
  if (key !== undefined) await forgetMigrationKey(db, participant);
  if (refusal === undefined) return recordSml(db, participant, 'registered');
  if (key !== undefined || refusal.fault === 'BadRequestFault') {
    const ours = (await sml.list()).some((held) => held.toLowerCase() === participant);
    if (ours) return recordSml(db, participant, 'registered');
    if (key === undefined && /already exist/i.test(refusal.message))
      return recordSml(db, participant, 'held_elsewhere', refusal);
  }
  return recordSml(db, participant, 'refused', refusal);
}

/** Deletes the organization from the SML; a NotFoundFault (deleted by an earlier attempt whose answer was lost) is done. */
async function deleteFromSml(db: Queryable, sml: SmlClient, participant: string): Promise<void> {
  const refusal = await sml.delete(participant).then(() => undefined, refusalOf);
  if (refusal === undefined || refusal.fault === 'NotFoundFault') return forgetSml(db, participant);
  return recordSml(db, participant, 'refused', refusal);
}
