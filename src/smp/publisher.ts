import type { CatalogueCache } from '../catalogue-cache/catalogue-cache.js';
import type { Database } from '../db/database.js';
import { fairTurns, type FairTurns } from '../core/concurrency.js';
import { NotFoundError, ServiceUnavailableError } from '../core/errors.js';
import { formatQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import type { Organization } from '../participants/identifiers.js';
import { isSpis } from '../participants/service-provider-identifiers.js';
import { NOT_HELD, type NotHeld } from '../core/held.js';
import type { HeldParticipants } from '../participants/held-participants.js';
import { heldReceiversOf, type OrganizationReceivers } from './receivers.js';
import type { SignedAnswerCache } from './signed-answer-cache.js';
import { taggedAnswer, weakTagOf } from '../http/public-caching.js';
import { HOW_TO_CONFIGURE, type SmpKey, type SmpKeys } from './keys.js';
import { participantIdentifierOf, type NamedParticipant } from './path-identifiers.js';
import { findOrganization, findServiceGroup } from './repository.js';
import {
  catalogueHeld,
  catalogueOf,
  nextRemovalFor,
  publishedReferences,
  type ReceiversCatalogue,
} from './service-group.js';
import { publishedProcesses } from './service-metadata.js';
import { SigningPool } from './signing-pool.js';
import { businessCardXml, serviceGroupXml } from './xml.js';

export interface PublisherOptions {
  db: Database;
  /** The catalogue held from the same database as `db`: the service groups' processes, providers and access points. */
  catalogue: CatalogueCache;
  /** The participants held from the same database as `db`: an organization's receivers, once loaded. */
  participants?: Pick<HeldParticipants, 'held' | 'caughtUp'>;
  /** Without a pair the signed answers are 503 (a PostgreSQL server without a configured key). */
  keys: SmpKeys | undefined;
  /** ICD → country for the business cards; undefined when the code list could not be read. */
  countries: ReadonlyMap<string, string> | undefined;
  /** Kept answers; only where every committed change reaches its `onChange`. */
  cache?: SignedAnswerCache;
  /** The base URL of the service group's `href`s (REGISTRY_PUBLIC_URL, no trailing slash). */
  publicUrl?: string;
}

/** The keys of an answer in the cache: its participant, and which of that participant's answers it is. */
function cacheKeys(organization: Organization, answer: string): [string, string] {
  return [formatQualifiedIdentifier(participantIdentifierOf(organization)), answer];
}

/** Which of a participant's answers the service metadata of a document type is, among its kept answers. */
const metadataAnswer = (documentType: QualifiedIdentifier) =>
  `service metadata ${formatQualifiedIdentifier(documentType)}`;

const notFound = (what: string) => new NotFoundError(`No ${what} is published for this participant`);

interface Signing {
  pool: SigningPool;
  keys: SmpKeys;
  /** Turns at the reads of a cold lookup: where the database is slow, one address's flood cannot fill its pool's queue. */
  readTurns: FairTurns;
  /** Turns at the signing threads: where they are what is slow, one address's flood cannot fill their queues. */
  signingTurns: FairTurns;
}

function signingWith(keys: SmpKeys, db: Database): Signing {
  const pool = new SigningPool();
  // Each thread has the next signature waiting beside the one it makes, and no more: the rest wait their turn here.
  const signaturesAtOnce = 2 * pool.size;
  return {
    pool,
    keys,
    // As many reads as the database runs at once: more would wait in its pool's queue, where a flood is ahead of
    // everyone; fewer than the signatures would leave the threads waiting.
    readTurns: fairTurns(Math.max(db.connections, signaturesAtOnce)),
    signingTurns: fairTurns(signaturesAtOnce),
  };
}

/** What the SMP interface answers, built from the registry's data as it is now. */
export class SmpPublisher {
  private readonly signing: Signing | undefined;

  constructor(private readonly options: PublisherOptions) {
    this.signing = options.keys && signingWith(options.keys, options.db);
  }

  /** Ends the signing threads (the application's close). */
  close(): Promise<void> {
    return this.signing?.pool.close() ?? Promise.resolve();
  }

  /**
   * `requestBase`, the URL the request was made to, is the `href`s' base when no public URL is configured; those
   * answers are not kept, since the Host header is the caller's to choose. The answer names the participant as the
   * request spells it, in its `href`s too.
   */
  async serviceGroup(participant: NamedParticipant, requestBase: string): Promise<Buffer> {
    this.requireSigning();
    const kept = this.keptServiceGroup(participant);
    if (kept) return kept;
    const builtAt = this.options.cache?.epoch;
    const found = await this.receiversOf(participant.organization, (read) => read());
    if (!found) throw notFound('service group');
    const held = await catalogueOf(this.options.catalogue, found.receivers);
    return this.serviceGroupOf(participant, found, held, this.options.publicUrl ?? requestBase, builtAt);
  }

  /**
   * The service group from memory alone, for an early answer: kept, or built from the participants and the catalogue
   * held (`HeldParticipants.held`, `catalogueHeld`), the snapshots the route's `serviceGroup` reads when they are
   * there. `NOT_HELD` when either is not (or the organization has no live participant): the route answers. Only with a
   * public URL, the `href`s' base.
   */
  serviceGroupHeld(participant: NamedParticipant): Buffer | NotHeld {
    const { publicUrl, participants, catalogue } = this.options;
    if (!this.signing || publicUrl === undefined) return NOT_HELD;
    const kept = this.keptServiceGroup(participant);
    if (kept) return kept;
    const builtAt = this.options.cache?.epoch;
    const snapshot = participants?.held() ?? NOT_HELD;
    const found = snapshot === NOT_HELD ? undefined : heldReceiversOf(snapshot, participant.organization);
    const held = found ? catalogueHeld(catalogue, found.receivers) : NOT_HELD;
    return found && held !== NOT_HELD ? this.serviceGroupOf(participant, found, held, publicUrl, builtAt) : NOT_HELD;
  }

  /** The service group kept for the participant: only with a public URL, where the answer is the same for every caller. */
  private keptServiceGroup(participant: NamedParticipant): Buffer | undefined {
    return this.options.publicUrl === undefined ? undefined : this.kept(participant, 'service group');
  }

  private serviceGroupOf(
    participant: NamedParticipant,
    found: OrganizationReceivers,
    held: ReceiversCatalogue,
    publicBase: string,
    builtAt: number | undefined,
  ): Buffer {
    const now = this.now();
    const references = publishedReferences(held, found.receivers, now);
    const body = Buffer.from(serviceGroupXml(participant.spelled, references, publicBase));
    if (this.options.publicUrl === undefined) return body;
    // Kept until a removal instant of what it lists at the latest: from then, it lists less.
    return this.keep(participant, 'service group', body, found, builtAt, nextRemovalFor(held, found.receivers, now));
  }

  /** The signed answer already made for this lookup, if one is kept: no database, no signing. */
  keptServiceMetadata(participant: NamedParticipant, documentType: QualifiedIdentifier): Buffer | undefined {
    return this.kept(participant, metadataAnswer(documentType));
  }

  /** The participant's `answer` if it is kept; only answers to the spelling as stored are (`NamedParticipant.asStored`). */
  private kept(participant: NamedParticipant, answer: string): Buffer | undefined {
    return participant.asStored
      ? this.options.cache?.get(...cacheKeys(participant.organization, answer), this.now())
      : undefined;
  }

  /**
   * `client`, the caller's address, waits its turn at the reads and at the signature: a client asking for many cold
   * lookups at once waits for its own, and the others' lookups do not wait behind them (fairTurns). When the caller's
   * copy is current by the answer's tag, the answer is not signed: `unchanged` carries the tag, for a 304.
   */
  async signedServiceMetadata(
    participant: NamedParticipant,
    documentType: QualifiedIdentifier,
    client: string,
    callersCopyIsCurrent: (tag: string) => boolean = () => false,
  ): Promise<Buffer | { unchanged: string }> {
    const { cache } = this.options;
    const { pool, keys, readTurns, signingTurns } = this.requireSigning();
    const kept = this.keptServiceMetadata(participant, documentType);
    if (kept) return kept;
    const builtAt = cache?.epoch;
    const found = await this.receiversOf(participant.organization, (read) => readTurns.run(client, read));
    if (!found) throw notFound('service group');
    const { processes, until: nextRemoval } = await publishedProcesses(
      this.options.catalogue,
      found.receivers,
      documentType,
      this.now(),
    );
    if (processes.length === 0) throw notFound('service metadata for this document type');
    // What the answer shows: what is signed, and the certificate it is signed with (a rollover changes the answer).
    const tagWith = (key: SmpKey) => weakTagOf([key.certificatePem, participant.spelled, documentType, processes]);
    const current = tagWith(keys.inUse().key);
    if (callersCopyIsCurrent(current)) return { unchanged: current };
    const { body, until } = await signingTurns.run(client, async () => {
      // A signature by a pair ends at the rollover to the next: access points then expect the next pair's.
      const { key, until: endOfPair } = keys.inUse();
      const signed = Buffer.from(await pool.sign(key, participant.spelled, documentType, processes));
      return { body: taggedAnswer(signed, tagWith(key)), until: endOfPair };
    });
    // Kept until a removal instant of its processes and document types at the latest: from then, it publishes less.
    return this.keep(participant, metadataAnswer(documentType), body, found, builtAt, Math.min(until, nextRemoval));
  }

  /**
   * The organization's live participants with their providers and processes: from the participants' snapshot once
   * they have read what changed (`caughtUp`), else read from the database in `turn`.
   */
  private async receiversOf(
    organization: Organization,
    turn: (read: () => Promise<OrganizationReceivers | undefined>) => Promise<OrganizationReceivers | undefined>,
  ): Promise<OrganizationReceivers | undefined> {
    const held = (await this.options.participants?.caughtUp()) ?? NOT_HELD;
    return held !== NOT_HELD
      ? heldReceiversOf(held, organization)
      : turn(() => findServiceGroup(this.options.db, organization));
  }

  /**
   * Keeps the participant's `answer` built from reads that started at `builtAt` (the cache's epoch then), until
   * `until` at the latest; only an answer to the spelling as stored (`NamedParticipant.asStored`).
   */
  private keep(
    participant: NamedParticipant,
    answer: string,
    body: Buffer,
    found: { nextDeleteDate: string | null },
    builtAt: number | undefined,
    until = Infinity,
  ): Buffer {
    // A delete date ends the answer at the start of that day (UTC), when the participant stops being live.
    const deleted = found.nextDeleteDate ? Date.parse(found.nextDeleteDate) : Infinity;
    if (participant.asStored)
      this.options.cache?.set(...cacheKeys(participant.organization, answer), body, Math.min(deleted, until), builtAt);
    return body;
  }

  /** The time by the pair's clock, which the kept answers' ends are measured by. */
  private now(): number {
    return this.options.keys?.clock() ?? Date.now();
  }

  /** Without a key the publication answers 503 (its service groups would point at answers nobody can verify). */
  private requireSigning(): Signing {
    if (!this.signing) throw new ServiceUnavailableError(`The SMP has no signing key configured: ${HOW_TO_CONFIGURE}`);
    return this.signing;
  }

  async businessCard({ organization, spelled }: NamedParticipant): Promise<string> {
    const { db, countries } = this.options;
    if (!countries) throw new ServiceUnavailableError('The participant identifier scheme code list could not be read');
    // A service provider's MLS address is no business: it has no card (the Directory is never told of it).
    const found = isSpis(organization.icd) ? undefined : await findOrganization(db, organization);
    if (!found) throw notFound('business card');
    return businessCardXml(spelled, {
      name: found.name,
      countryCode: countryOf(countries, organization.icd),
      registrationDate: found.registrationDate,
      identifier: { scheme: organization.icd, value: organization.organizationIdentifier },
    });
  }
}

/** ISO 3166 alpha-2 of the ICD's issuing country; `ZZ` (unknown) for international schemes. */
function countryOf(countries: ReadonlyMap<string, string>, icd: string): string {
  const country = countries.get(icd);
  return country && /^[A-Z]{2}$/.test(country) ? country : 'ZZ';
}
