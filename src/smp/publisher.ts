import type { Database } from '../db/database.js';
import { NotFoundError, ServiceUnavailableError } from '../core/errors.js';
import type { Organization } from '../participants/identifiers.js';
import type { SignedAnswerCache } from './cache.js';
import { HOW_TO_CONFIGURE, type SmpKey } from './keys.js';
import { participantIdentifierOf } from './identifiers.js';
import { findOrganization, publishedDocumentTypes, publishedProcesses } from './repository.js';
import { SigningPool } from './signing-pool.js';
import { businessCardXml, serviceGroupXml, type Identifier } from './xml.js';

export interface PublisherOptions {
  db: Database;
  /** Without one the signed answers are 503 (a PostgreSQL server without a configured key). */
  key: SmpKey | undefined;
  /** ICD → country for the business cards; undefined when the code list could not be read. */
  countries: ReadonlyMap<string, string> | undefined;
  /** Kept signed answers; only where every committed change reaches its `onChange`. */
  cache?: SignedAnswerCache;
}

/** The participant and document type keys of a signed answer in the cache. */
function cacheKeysOf(organization: Organization, documentType: Identifier): [string, string] {
  const participant = participantIdentifierOf(organization);
  return [`${participant.scheme}::${participant.value}`, `${documentType.scheme}::${documentType.value}`];
}

const notFound = (what: string) => new NotFoundError(`No ${what} is published for this participant`);

/** What the SMP interface answers, built from the registry's data as it is now. */
export class SmpPublisher {
  private readonly signing: SigningPool | undefined;

  constructor(private readonly options: PublisherOptions) {
    this.signing = options.key && new SigningPool(options.key);
  }

  /** Starts the signing threads (the application's ready). */
  start(): void {
    this.signing?.start();
  }

  /** Ends the signing threads (the application's close). */
  close(): Promise<void> {
    return this.signing?.close() ?? Promise.resolve();
  }

  async serviceGroup(organization: Organization, publicBase: string): Promise<string> {
    const { db } = this.options;
    this.requireSigning();
    if (!(await findOrganization(db, organization))) throw notFound('service group');
    return serviceGroupXml(participantIdentifierOf(organization), await publishedDocumentTypes(db, organization), publicBase);
  }

  /** The signed answer already made for this lookup, if one is kept: no database, no signing. */
  keptServiceMetadata(organization: Organization, documentType: Identifier): Buffer | undefined {
    return this.options.cache?.get(...cacheKeysOf(organization, documentType));
  }

  async signedServiceMetadata(organization: Organization, documentType: Identifier): Promise<Buffer> {
    const { db, cache } = this.options;
    const signing = this.requireSigning();
    const kept = this.keptServiceMetadata(organization, documentType);
    if (kept) return kept;
    const builtAt = cache?.epoch;
    const found = await findOrganization(db, organization);
    if (!found) throw notFound('service group');
    const processes = await publishedProcesses(db, organization, documentType);
    if (processes.length === 0) throw notFound('service metadata for this document type');
    const body = Buffer.from(await signing.sign(participantIdentifierOf(organization), documentType, processes));
    // A delete date ends the answer at the start of that day (UTC), when the participant stops being live.
    cache?.set(...cacheKeysOf(organization, documentType), body, found.nextDeleteDate ? Date.parse(found.nextDeleteDate) : Infinity, builtAt);
    return body;
  }

  /** Without a key the publication answers 503 (its service groups would point at answers nobody can verify). */
  private requireSigning(): SigningPool {
    if (!this.signing) throw new ServiceUnavailableError(`The SMP has no signing key configured: ${HOW_TO_CONFIGURE}`);
    return this.signing;
  }

  async businessCard(organization: Organization): Promise<string> {
    const { db, countries } = this.options;
    if (!countries) throw new ServiceUnavailableError('The participant identifier scheme code list could not be read');
    const found = await findOrganization(db, organization);
    if (!found) throw notFound('business card');
    return businessCardXml(participantIdentifierOf(organization), {
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

