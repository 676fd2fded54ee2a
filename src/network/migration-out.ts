import { randomInt } from 'node:crypto';
import type { CatalogueCache } from '../catalogue-cache/catalogue-cache.js';
import { ConflictError } from '../core/errors.js';
import type { Database, Queryable } from '../db/database.js';
import { parseOrganization } from '../participants/identifiers.js';
import { endMigratedOrganization } from '../participants/writes.js';
import type { Actor } from '../db/change-log.js';
import { forgetSml, heldForThisSmp, participantsMigratingOut, recordSmlIfUnchanged, smlStateSince } from './network.js';
import type { SmlClient } from './sml-client.js';

const KEY_LENGTH = 24;
const KINDS = ['abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', '0123456789', '@#$%()[]{}*^-!~|+='];
const ANY = KINDS.join('');
const pick = (characters: string) => characters.charAt(randomInt(characters.length));

/**
 * A random migration key that satisfies BDMSL's rule (`MIGRATION_KEY_PATTERN`), as phax/peppol-commons makes
 * them: 24 characters, two of each kind, the rest of any kind; here drawn by `crypto.randomInt` and shuffled.
 */
function newMigrationKey(): string {
  const characters = KINDS.flatMap((kind) => [pick(kind), pick(kind)]);
  while (characters.length < KEY_LENGTH) characters.push(pick(ANY));
  for (let index = characters.length - 1; index > 0; index -= 1) {
    const other = randomInt(index + 1);
    [characters[index], characters[other]] = [characters[other] as string, characters[index] as string];
  }
  return characters.join('');
}

const changedMeanwhile = (participant: string) =>
  new ConflictError(
    `The registration of ${participant} in the SML changed while the SML answered (a delete or a migration was delivered); ask again`,
  );

/**
 * Lets another SMP take the organization over: registers a new key with the SML (PrepareToMigrate; one asked
 * for while migrating replaces the last) and returns it, to be shown once. It is kept nowhere. The state is
 * recorded only if no delivery recorded another meanwhile (else 409: the key went to a registration that is gone).
 */
export async function prepareMigrationOut(db: Queryable, sml: SmlClient, participant: string): Promise<string> {
  const before = await smlStateSince(db, participant);
  if (!before || !heldForThisSmp(before.state))
    throw new ConflictError(`The SML does not hold ${participant} for this SMP`);
  const key = newMigrationKey();
  await sml.prepareToMigrate(participant, key);
  if (!(await recordSmlIfUnchanged(db, participant, 'migrating_out', before))) throw changedMeanwhile(participant);
  return key;
}

/** Withdraws the key given: the SML's migration record gets another key, which no one is shown. */
export async function withdrawMigrationOut(db: Queryable, sml: SmlClient, participant: string): Promise<void> {
  const before = await smlStateSince(db, participant);
  if (before?.state !== 'migrating_out') throw new ConflictError(`No migration of ${participant} is under way`);
  await sml.prepareToMigrate(participant, newMigrationKey());
  if (!(await recordSmlIfUnchanged(db, participant, 'registered', before))) throw changedMeanwhile(participant);
}

/**
 * Ends the organizations migrating out that the SML no longer holds for this SMP (`held`, its List): another SMP
 * has migrated them. Each one's participants end, logged as 'migrate', in one transaction with its SML state.
 */
export async function finishMigrationsOut(
  db: Database,
  held: ReadonlySet<string>,
  actor: Actor,
  catalogue?: CatalogueCache,
): Promise<string[]> {
  const migrated = (await participantsMigratingOut(db)).filter((participant) => !held.has(participant));
  for (const participant of migrated) {
    const organization = parseOrganization(participant);
    await db.transaction(async (tx) => {
      if (organization) await endMigratedOrganization(tx, actor, organization, catalogue);
      await forgetSml(tx, participant);
    });
  }
  return migrated;
}
