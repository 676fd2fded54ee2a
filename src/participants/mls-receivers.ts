/**
 * A service provider's Message Level Status receiver: the 0242 participant named by the Main ID of its access point's
 * certificates, receiving the MLS process. Read and registered in one step for the provider itself or by the authority.
 */
import type { Actor } from '../db/change-log.js';
import type { Queryable } from '../db/database.js';
import { ConflictError, ValidationError } from '../core/errors.js';
import type { ContactForm } from '../core/schemas.js';
import { qualifiedIdentifierOf } from './identifiers.js';
import { participantIsLive } from './repository.js';
import { mainIdOf, MLS_PROCESS, providerSeats, SPIS_ICD } from './service-provider-identifiers.js';
import { registerParticipant, updateRegistration, type HeldCatalogue } from './writes.js';
import type { AddParticipantForm } from './schemas.js';

export const MLS_RECEIVER_FORM = 'mlsReceiverForm';

export interface MlsAddress {
  qualifiedIdentifier: string;
  seatId: string;
  /** The provider's participant of that identifier, when it has one. */
  participant: string | null;
  /** Whether that participant receives the MLS process: the address is registered. */
  receivesMls: boolean;
}

export interface MlsReceiver {
  serviceProvider: { identifier: string; title: string };
  seatIds: string[];
  addresses: MlsAddress[];
}

/** The provider's MLS addresses, one per Main ID its access point's certificates carry; undefined for no such provider. */
export async function mlsReceiverOf(db: Queryable, serviceProviderId: string): Promise<MlsReceiver | undefined> {
  const seats = await providerSeats(db, serviceProviderId);
  if (!seats) return undefined;
  const bySeat = new Map(seats.seatIds.map((seatId) => [mainIdOf(seatId), seatId]));
  const held = await db.query<{ id: string; mainId: string; receivesMls: boolean }>(
    `SELECT pa.id, pa.organization_identifier AS "mainId",
            EXISTS (SELECT 1 FROM participant_processes pp JOIN processes p ON p.id = pp.process_id
                     WHERE pp.participant_id = pa.id AND p.scheme || '::' || p.value = $4) AS "receivesMls"
       FROM participants pa
      WHERE pa.service_provider_id = $1 AND pa.icd = $2 AND pa.organization_identifier = ANY($3::text[]) AND ${participantIsLive('pa')}`,
    [serviceProviderId, SPIS_ICD, [...bySeat.keys()], MLS_PROCESS],
  );
  const addresses = [...bySeat].map(([mainId, seatId]): MlsAddress => {
    const participant = held.find((row) => row.mainId === mainId);
    return {
      qualifiedIdentifier: qualifiedIdentifierOf({ icd: SPIS_ICD, organizationIdentifier: mainId }),
      seatId,
      participant: participant?.id ?? null,
      receivesMls: participant?.receivesMls ?? false,
    };
  });
  return { serviceProvider: { identifier: serviceProviderId, title: seats.title }, seatIds: seats.seatIds, addresses };
}

/** Every provider's MLS receiver, by title: what the authority sees. */
export async function mlsReceivers(db: Queryable, serviceProviderId: string | null): Promise<MlsReceiver[]> {
  const providers = await db.query<{ id: string }>(
    'SELECT id FROM service_providers WHERE $1::uuid IS NULL OR id = $1 ORDER BY title, id',
    [serviceProviderId],
  );
  const receivers = await Promise.all(providers.map((provider) => mlsReceiverOf(db, provider.id)));
  return receivers.filter((receiver) => receiver !== undefined);
}

/**
 * Registers each MLS address of the provider that is not yet: a new participant (named by the provider's title, the
 * contact given or else its access point provider's) receiving the MLS process, or the MLS process added to the
 * provider's participant of that identifier. Returns how many participants it made, and the receiver as it is now; 409
 * when nothing was left to do.
 */
export async function registerMlsReceiver(
  tx: Queryable,
  actor: Actor,
  serviceProviderId: string,
  contact: ContactForm | undefined,
  catalogue?: HeldCatalogue,
): Promise<{ created: number; receiver: MlsReceiver }> {
  const receiver = await mlsReceiverOf(tx, serviceProviderId);
  if (!receiver) throw new ConflictError(`The service provider ${serviceProviderId} was deleted meanwhile`);
  const owner = `the service provider '${receiver.serviceProvider.title}'`;
  if (receiver.addresses.length === 0) {
    throw new ConflictError(
      `The certificates of ${owner}'s access point carry no Peppol Seat ID (a subject CN such as PNO000123): ` +
        'its MLS address is the last six digits of that Seat ID. Give the access point its Peppol AP certificate first.',
    );
  }
  const pending = receiver.addresses.filter((address) => !address.receivesMls);
  if (pending.length === 0) {
    throw new ConflictError(
      `The MLS address of ${owner} is registered already: ${receiver.addresses.map((address) => address.qualifiedIdentifier).join(', ')}`,
    );
  }
  const registered = new Map<string, string>();
  for (const address of pending) {
    if (address.participant) {
      await addMlsProcess(tx, actor, serviceProviderId, address.participant, catalogue);
      continue;
    }
    const form: AddParticipantForm = {
      icd: SPIS_ICD as AddParticipantForm['icd'],
      organizationIdentifier: mainIdOf(address.seatId),
      name: receiver.serviceProvider.title,
      processes: [{ qualifiedIdentifier: MLS_PROCESS }],
      contact: contact ?? (await accessPointContactOf(tx, serviceProviderId)),
    };
    registered.set(
      address.qualifiedIdentifier,
      (await registerParticipant(tx, actor, serviceProviderId, form, catalogue)).identifier,
    );
  }
  const addresses = receiver.addresses.map((address) => ({
    ...address,
    participant: address.participant ?? registered.get(address.qualifiedIdentifier) ?? null,
    receivesMls: true,
  }));
  return { created: registered.size, receiver: { ...receiver, addresses } };
}

async function addMlsProcess(
  tx: Queryable,
  actor: Actor,
  serviceProviderId: string,
  participantId: string,
  catalogue?: HeldCatalogue,
) {
  const [current] = await tx.query<{ processIds: string[]; contact: ContactForm; deleteDate: string | null }>(
    `SELECT ARRAY(SELECT process_id::text FROM participant_processes WHERE participant_id = pa.id) AS "processIds",
            jsonb_strip_nulls(jsonb_build_object('name', pa.contact_name, 'email', pa.contact_email, 'phoneNumber', pa.contact_phone)) AS contact,
            to_char(pa.delete_date, 'YYYY-MM-DD') AS "deleteDate"
       FROM participants pa WHERE pa.id = $1`,
    [participantId],
  );
  if (!current) throw new ConflictError(`The participant ${participantId} ended meanwhile; try again`);
  return updateRegistration(
    tx,
    actor,
    participantId,
    serviceProviderId,
    {
      processes: [...current.processIds.map((identifier) => ({ identifier })), { qualifiedIdentifier: MLS_PROCESS }],
      contact: current.contact,
      ...(current.deleteDate === null ? {} : { deleteDate: current.deleteDate }),
    },
    catalogue,
  );
}

/** The contact of the provider's access point provider: who runs the access point the statuses reach. */
async function accessPointContactOf(tx: Queryable, serviceProviderId: string): Promise<ContactForm> {
  const [row] = await tx.query<{ contact: ContactForm | null }>(
    `SELECT CASE WHEN app.contact_name IS NULL THEN NULL
                 ELSE jsonb_strip_nulls(jsonb_build_object('name', app.contact_name, 'email', app.contact_email, 'phoneNumber', app.contact_phone)) END AS contact
       FROM service_providers sp JOIN access_points ap ON ap.id = sp.access_point_id JOIN access_point_providers app ON app.id = ap.provider_id
      WHERE sp.id = $1`,
    [serviceProviderId],
  );
  if (row?.contact) return row.contact;
  throw ValidationError.of(MLS_RECEIVER_FORM, [
    {
      field: 'contact',
      code: 'NotNull',
      typeName: 'ContactForm',
      defaultMessage:
        "must not be null: the access point provider has no contact to take, so name the MLS receiver's contact",
    },
  ]);
}
