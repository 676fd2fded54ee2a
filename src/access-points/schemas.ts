import { Type, type Static } from 'typebox';
import { AccessPointProvider, AccessPointProviderIdentifiable } from '../access-point-providers/schemas.js';
import { PageQuery, PageSchema } from '../core/paging.js';
import { IdentifiableByUuid, Uuid } from '../core/schemas.js';

/** An endpoint's transport profile in a form: a known profile, by identifier or by value, and the endpoint's certificate types. */
export const EndpointTransportProfileForm = Type.Object(
  {
    identifier: Type.Optional(Uuid({ description: 'the identifier of a known transport profile' })),
    value: Type.Optional(Type.String({ description: 'the value of a known transport profile, when identifier is absent' })),
    title: Type.Optional(Type.String({ description: 'ignored: the known profile’s title is served' })),
    certificateTypes: Type.Optional(Type.Array(Type.String({ minLength: 1 }), {
      uniqueItems: true, default: [], description: 'certificate types used by the endpoint',
    })),
  },
  { title: 'TransportProfileIdentifiable' },
);

export const EndpointForm = Type.Object(
  {
    url: Type.String({ format: 'https-url', maxLength: 2048, description: 'an absolute https URL' }),
    transportProfile: EndpointTransportProfileForm,
  },
  { title: 'EndpointForm' },
);

export const AccessPointForm = Type.Object(
  {
    title: Type.String({ minLength: 1, 'x-constraint': 'NotEmpty' }),
    provider: AccessPointProviderIdentifiable,
    endpoints: Type.Array(EndpointForm, { uniqueItems: true }),
  },
  { title: 'AccessPointForm' },
);
export type AccessPointForm = Static<typeof AccessPointForm>;

export const Endpoint = Type.Object(
  {
    url: Type.String(),
    transportProfile: Type.Object({
      title: Type.String({ description: 'name of the transport profile' }),
      value: Type.String({ description: 'transport profile identifier' }),
      certificateTypes: Type.Array(Type.String(), { uniqueItems: true, description: 'certificate types used by the endpoint' }),
    }),
  },
  { title: 'Endpoint' },
);

export const AccessPoint = Type.Object(
  { identifier: Uuid(), title: Type.String(), provider: AccessPointProvider, endpoints: Type.Array(Endpoint, { uniqueItems: true }) },
  { title: 'AccessPoint' },
);
export type AccessPoint = Static<typeof AccessPoint>;

/** How a service provider names the access point that delivers its participants' documents. */
export const AccessPointIdentifiable = IdentifiableByUuid('AccessPointIdentifiable');

export const AccessPointPage = PageSchema(AccessPoint, 'AccessPointPage');
export const AccessPointQuery = Type.Object(PageQuery);
