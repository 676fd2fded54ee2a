import { Type, type Static } from 'typebox';
import { PageQuery, PageSchema } from '../core/paging.js';
import { Contact, ContactForm, IdentifiableByUuid, Nullable, RequiredName, Uuid } from '../core/schemas.js';

export const AccessPointProviderForm = Type.Object(
  { title: RequiredName(), contact: ContactForm },
  { title: 'AccessPointProviderForm' },
);
export type AccessPointProviderForm = Static<typeof AccessPointProviderForm>;

export const AccessPointProvider = Type.Object(
  { identifier: Uuid(), title: Type.String(), contact: Nullable(Contact) },
  { title: 'AccessPointProvider' },
);
export type AccessPointProvider = Static<typeof AccessPointProvider>;

/** How access points and users name their access point provider. */
export const AccessPointProviderIdentifiable = IdentifiableByUuid('AccessPointProviderIdentifiable');

export const AccessPointProviderPage = PageSchema(AccessPointProvider, 'AccessPointProviderPage');
export const AccessPointProviderQuery = Type.Object(PageQuery);
