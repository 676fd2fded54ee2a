/**
 * The service providers' own participant identifiers (ICD 0242, the OpenPeppol Service Provider Identification Scheme):
 * where a receiving access point sends its Message Level Status. `0242:<Main ID>` and its variants
 * (`<Main ID>-<Use Case>[.<sub>]`) belong to the provider whose Peppol access point certificate carries that Main ID:
 * the last six digits of the Seat ID in its subject (docs/design/participants.md, "MLS receivers").
 */
import { seatIdOf } from '../access-points/certificates.js';
import { ForbiddenError } from '../core/errors.js';
import type { Actor } from '../db/change-log.js';
import type { Queryable } from '../db/database.js';

export const SPIS_ICD = '0242';
/** The Peppol Message Level Status process and document type (code lists 9.2 and later). */
export const MLS_PROCESS = 'cenbii-procid-ubl::urn:peppol:edec:mls';
export const MLS_DOCUMENT_TYPE =
  'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:peppol:edec:mls:1.0::2.1';

export const isSpis = (icd: string) => icd === SPIS_ICD;

/** The Main ID of a Seat ID (`PNO000123`): its last six digits. */
export const mainIdOf = (seatId: string) => seatId.slice(-6);

/** The Main ID a 0242 value names: what comes before its Use Case (`000123-MLS.sub` names 000123). */
const namedMainId = (organizationIdentifier: string) => organizationIdentifier.split('-')[0] ?? '';

export interface ProviderSeats {
  title: string;
  /** The distinct Seat IDs of its access point's endpoint certificates, in order. */
  seatIds: string[];
}

/**
 * The Seat IDs the certificates of the provider's access point carry; undefined when there is no such provider. The
 * provider and its access point stay as read (share-locked) until the transaction ends, so the certificates a
 * registration was checked against cannot change under it.
 */
export async function providerSeats(tx: Queryable, serviceProviderId: string): Promise<ProviderSeats | undefined> {
  const [provider] = await tx.query<{ title: string; accessPointId: string | null }>(
    'SELECT title, access_point_id AS "accessPointId" FROM service_providers WHERE id = $1 FOR SHARE',
    [serviceProviderId],
  );
  if (!provider) return undefined;
  const certificates = await tx.query<{ certificate: string }>(
    `SELECT e.certificate FROM endpoints e
      WHERE e.access_point_id = (SELECT id FROM access_points WHERE id = $1 FOR SHARE) AND e.certificate IS NOT NULL
      ORDER BY e.position`,
    [provider.accessPointId],
  );
  const seatIds = certificates.map((row) => seatIdOf(row.certificate)).filter((seatId) => seatId !== undefined);
  return { title: provider.title, seatIds: [...new Set(seatIds)] };
}

/**
 * Refuses (403) a 0242 participant `value` for a provider whose access point certificates do not carry its Main ID, in
 * words that say whose identifier it is and what the certificates carry. `actor` tells whether the provider asks itself.
 */
export async function checkServiceProviderIdentifier(
  tx: Queryable,
  actor: Actor,
  serviceProviderId: string,
  value: string,
): Promise<void> {
  const seats = await providerSeats(tx, serviceProviderId);
  const mainId = namedMainId(value);
  if (!seats || seats.seatIds.some((seatId) => mainIdOf(seatId) === mainId)) return;
  const whose =
    actor.actingProviderId === serviceProviderId
      ? "your access points' certificates carry"
      : `the access point certificates of the service provider '${seats.title}' carry`;
  const carried = seats.seatIds.length > 0 ? `the Seat ID ${seats.seatIds.join(', ')}` : 'no Peppol Seat ID';
  throw new ForbiddenError(
    `${SPIS_ICD}:${value} is the service provider identifier of the provider whose Peppol access point ` +
      `certificate has a Seat ID ending in ${mainId || '(none)'}; ${whose} ${carried}.`,
  );
}
