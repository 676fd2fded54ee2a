import { Type, type Static } from 'typebox';
import { AccessPointProvider, AccessPointProviderIdentifiable } from '../access-point-providers/schemas.js';
import { PageQuery, PageSchema } from '../core/paging.js';
import {
  FreeText,
  IdentifiableByUuid,
  IdentifierText,
  OptionalName,
  RequiredName,
  TextBound,
  Uuid,
} from '../core/schemas.js';
import { TRANSPORT_PROFILE_VALUE_LENGTH } from '../transport-profiles/schemas.js';

/** An endpoint's transport profile in a form: a known profile, by identifier or by value, and the endpoint's certificate types. */
const EndpointTransportProfileForm = Type.Object(
  {
    identifier: Type.Optional(Uuid({ description: 'the identifier of a known transport profile' })),
    value: Type.Optional(
      IdentifierText({
        maxLength: TRANSPORT_PROFILE_VALUE_LENGTH,
        description: 'the value of a known transport profile, when identifier is absent',
      }),
    ),
    title: OptionalName({ description: 'ignored: the known profile’s title is served' }),
    certificateTypes: Type.Optional(
      Type.Array(FreeText({ minLength: 1, maxLength: TextBound.name }), {
        uniqueItems: true,
        default: [],
        description: 'certificate types used by the endpoint',
      }),
    ),
  },
  { title: 'TransportProfileIdentifiable' },
);

/** What the SMP publishes of an endpoint besides its address: additions to the specified shape, all optional. */
const EndpointPublication = {
  certificate: Type.Optional(
    Type.String({
      maxLength: 20_000,
      description:
        'addition (SMP publication): the access point certificate of this endpoint, PEM or base64 DER; ' +
        'parsed when stored, an expired one is refused; served as base64 DER. An endpoint without one is not published.',
    }),
  ),
  serviceDescription: Type.Optional(
    FreeText({
      maxLength: 1000,
      description:
        'addition (SMP publication): a human-readable description of the service; default: the access point title',
    }),
  ),
  technicalContactUrl: Type.Optional(
    Type.String({
      format: 'uri',
      maxLength: 2048,
      description: "addition (SMP publication): where to reach the endpoint's technical contact (https: or mailto:)",
    }),
  ),
  requireBusinessLevelSignature: Type.Optional(
    Type.Boolean({
      description:
        'addition (SMP publication): true if the endpoint requires a business-level signature on the documents it receives; ' +
        'default (and when absent from a response): false',
    }),
  ),
  serviceActivationDate: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'addition (SMP publication): from when the endpoint serves',
    }),
  ),
  serviceExpirationDate: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'addition (SMP publication): until when the endpoint serves',
    }),
  ),
};

export const EndpointForm = Type.Object(
  {
    url: Type.String({ format: 'https-url', maxLength: 2048, description: 'an absolute https URL' }),
    transportProfile: EndpointTransportProfileForm,
    ...EndpointPublication,
  },
  { title: 'EndpointForm' },
);

export const AccessPointForm = Type.Object(
  {
    title: RequiredName(),
    provider: AccessPointProviderIdentifiable,
    endpoints: Type.Array(EndpointForm, { uniqueItems: true }),
  },
  { title: 'AccessPointForm' },
);
export type AccessPointForm = Static<typeof AccessPointForm>;

export type EndpointForm = Static<typeof EndpointForm>;

const Endpoint = Type.Object(
  {
    url: Type.String(),
    transportProfile: Type.Object({
      title: Type.String({ description: 'name of the transport profile' }),
      value: Type.String({ description: 'transport profile identifier' }),
      certificateTypes: Type.Array(Type.String(), {
        uniqueItems: true,
        description: 'certificate types used by the endpoint',
      }),
    }),
    ...EndpointPublication,
  },
  { title: 'Endpoint' },
);

export const AccessPoint = Type.Object(
  {
    identifier: Uuid(),
    title: Type.String(),
    provider: AccessPointProvider,
    endpoints: Type.Array(Endpoint, { uniqueItems: true }),
  },
  { title: 'AccessPoint' },
);
export type AccessPoint = Static<typeof AccessPoint>;

/** How a service provider names the access point that delivers its participants' documents. */
export const AccessPointIdentifiable = IdentifiableByUuid('AccessPointIdentifiable');

export const AccessPointPage = PageSchema(AccessPoint, 'AccessPointPage');
export const AccessPointQuery = Type.Object(PageQuery);
