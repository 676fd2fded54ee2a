import { Type, type Static } from 'typebox';
import { PageQuery, PageSchema } from '../core/paging.js';
import { IdentifierText, RequiredName, Uuid } from '../core/schemas.js';

export const TRANSPORT_PROFILE_VALUE_LENGTH = 500;

export const TransportProfileForm = Type.Object(
  {
    value: IdentifierText({
      minLength: 1,
      maxLength: TRANSPORT_PROFILE_VALUE_LENGTH,
      'x-constraint': 'NotEmpty',
      description: 'the transport profile identifier, unique; printable US-ASCII',
      examples: ['peppol-transport-as4-v2_0'],
    }),
    title: RequiredName(),
    restricted: Type.Optional(
      Type.Boolean({ default: false, description: 'deprecated: no endpoint may newly use it' }),
    ),
  },
  { title: 'TransportProfileForm' },
);
export type TransportProfileForm = Static<typeof TransportProfileForm>;

export const TransportProfile = Type.Object(
  { identifier: Uuid(), value: Type.String(), title: Type.String(), restricted: Type.Boolean() },
  { title: 'TransportProfile' },
);
export type TransportProfile = Static<typeof TransportProfile>;

export const TransportProfilePage = PageSchema(TransportProfile, 'TransportProfilePage');
export const TransportProfileQuery = Type.Object(PageQuery);
