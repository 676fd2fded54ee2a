import { Type, type Static } from 'typebox';
import { PageQuery, PageSchema } from '../core/paging.js';
import {
  Contact,
  ContactForm,
  IcdSchema,
  IdentifiableByUuid,
  IdentifierText,
  Nullable,
  OptionalName,
  ProcessIdentifiable,
  QualifiedIdentifierString,
  TextSearch,
  Uuid,
} from '../core/schemas.js';
import { Process } from '../processes/schemas.js';

const DateString = (description: string) => Type.String({ format: 'date', description });

/** Extension: the day the participant is removed; a future date, absent for none. */
const DeleteDate = Type.Optional(
  DateString('extension: the day the participant is removed (a future date); omit for none'),
);

export const AddParticipantForm = Type.Object(
  {
    icd: IcdSchema,
    organizationIdentifier: IdentifierText({
      minLength: 1,
      maxLength: 35,
      description:
        "case-insensitive, stored in lower case; printable US-ASCII (no blank, no control character); and it keeps its ICD's rule " +
        "(the Peppol Participant Identifier Schemes code list's pattern and check digit, e.g. 0192: nine digits, mod 11), else 400 with " +
        'code `IdentifierRule` and the rule in words, unless IDENTIFIER_VALUE_CHECKS=false',
    }),
    organizationPartIdentifier: Type.Optional(IdentifierText({ maxLength: 35, description: 'printable US-ASCII' })),
    sourceIndicator: Type.Optional(Type.String({ minLength: 1, maxLength: 1, pattern: '^[0-9]$' })),
    name: OptionalName({ description: 'organization name' }),
    processes: Type.Array(ProcessIdentifiable),
    contact: ContactForm,
    deleteDate: DeleteDate,
  },
  { title: 'AddParticipantForm' },
);
export type AddParticipantForm = Static<typeof AddParticipantForm>;

export const UpdateParticipantForm = Type.Object(
  { processes: Type.Array(ProcessIdentifiable), contact: ContactForm, deleteDate: DeleteDate },
  { title: 'UpdateParticipantForm' },
);
export type UpdateParticipantForm = Static<typeof UpdateParticipantForm>;

export const ServiceProviderSummary = Type.Object(
  { identifier: Uuid(), title: Type.String() },
  { title: 'ServiceProvider' },
);

/** A participant's own fields: what its answer holds besides its processes. */
const participantFields = {
  identifier: Uuid(),
  qualifiedIdentifier: QualifiedIdentifierString,
  icd: Type.String(),
  organizationIdentifier: Type.String(),
  organizationPartIdentifier: Nullable(Type.String()),
  sourceIndicator: Nullable(Type.String()),
  name: Nullable(Type.String()),
  registrationDate: DateString('day of creation (UTC)'),
  lastModificationDate: DateString('day of the last change (UTC)'),
  deleteDate: Nullable(DateString('the day the participant is removed')),
  contact: Contact,
  provider: ServiceProviderSummary,
};

/** A participant without its processes, serialized apart from them (participants/json.ts). */
export const ParticipantFields = Type.Object(participantFields);

/** Its processes last: participants/json.ts writes them after the other fields. */
export const Participant = Type.Object(
  {
    ...participantFields,
    processes: Type.Optional(
      Type.Array(Process, { description: 'on a single participant always; in searches when `processes=true`' }),
    ),
  },
  { title: 'Participant' },
);
export type Participant = Static<typeof Participant>;

export const ParticipantPage = PageSchema(Participant, 'ParticipantPage');

/** A participant whose organization identifier breaks its scheme's rule, with what is wrong. */
export const ParticipantWithFault = Type.Object(
  {
    ...participantFields,
    identifierFault: Type.String({
      description: "what is wrong with the organization identifier by its scheme's rule, in plain words",
    }),
  },
  { title: 'ParticipantWithIdentifierFault' },
);
export type ParticipantWithFault = Static<typeof ParticipantWithFault>;

export const IdentifierFaultPage = PageSchema(ParticipantWithFault, 'ParticipantIdentifierFaultPage');

export const IdentifierFaultQuery = Type.Object({ ...PageQuery });

export const ParticipantFilter = Type.Object({
  ...TextSearch('case-insensitive part of the name, or start of the organization identifier'),
  icd: Type.Optional(IcdSchema),
  lastModificationDate: Type.Optional(DateString('last modified on this day')),
  lastModificationDateFrom: Type.Optional(DateString('last modified on or after this day')),
  lastModificationDateTo: Type.Optional(DateString('last modified on or before this day')),
  processes: Type.Boolean({ default: false, description: 'true makes each participant include its processes' }),
});
export type ParticipantFilter = Static<typeof ParticipantFilter>;

export const ParticipantQuery = Type.Object({ ...ParticipantFilter.properties, ...PageQuery });

export const ParticipantParams = Type.Object({
  identifier: Type.String({
    description:
      "the participant's UUID, or the qualified identifier `iso6523-actorid-upis::<icd>:<organizationIdentifier>` of its organization",
  }),
});

export const TransferParams = Type.Object({
  ...ParticipantParams.properties,
  serviceProviderIdentifier: Uuid({ description: 'the service provider that receives the participant' }),
});

export const ProcessList = Type.Array(Process);

const MlsAddress = Type.Object(
  {
    qualifiedIdentifier: QualifiedIdentifierString,
    seatId: Type.String({
      description: 'the Peppol Seat ID (CN of the access point certificate) whose last six digits are the Main ID',
    }),
    participant: Nullable(Uuid({ description: "the provider's participant of this identifier, when it has one" })),
    receivesMls: Type.Boolean({
      description: 'true when that participant receives the MLS process: the address is registered',
    }),
  },
  { title: 'MlsAddress' },
);

export const MlsReceiver = Type.Object(
  {
    serviceProvider: ServiceProviderSummary,
    seatIds: Type.Array(Type.String(), {
      description: "the Peppol Seat IDs the certificates of the provider's access point carry",
    }),
    addresses: Type.Array(MlsAddress, {
      description: 'one `iso6523-actorid-upis::0242:<Main ID>` per Main ID; none without a Seat ID',
    }),
  },
  { title: 'MlsReceiver' },
);

export const MlsReceiverList = Type.Array(MlsReceiver);

export const MlsReceiverQuery = Type.Object({
  serviceProvider: Type.Optional(
    Uuid({ description: "only this service provider's (ADMIN, REGISTRY_AUTHORITY; a provider sees its own alone)" }),
  ),
});

export const MlsReceiverForm = Type.Object(
  {
    serviceProvider: Type.Optional(IdentifiableByUuid('ServiceProviderIdentifiable')),
    contact: Type.Optional(ContactForm),
  },
  {
    title: 'MlsReceiverForm',
    description:
      'serviceProvider: whose MLS address (required of ADMIN and REGISTRY_AUTHORITY; a provider registers its own); ' +
      "contact: the participant's contact, by default the contact of the provider's access point provider",
  },
);
export type MlsReceiverForm = Static<typeof MlsReceiverForm>;

export const RemovedIcdQuery = Type.Object({ ...PageQuery });

export const EndRemovedIcdQuery = Type.Object({
  icd: Type.Optional(IcdSchema),
});

export const EndedParticipants = Type.Object(
  {
    ended: Type.Array(QualifiedIdentifierString, {
      description: 'the participants ended by this call, each deleted as by DELETE',
    }),
    remaining: Type.Integer({ description: 'how many such participants remain: call again while it is not 0' }),
  },
  { title: 'EndedParticipants' },
);
