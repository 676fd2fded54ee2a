import { Type, type Static } from 'typebox';
import { AccessPointIdentifiable } from '../access-points/schemas.js';
import { PageQuery, PageSchema } from '../core/paging.js';
import { IdentifiableByUuid, Nullable, RequiredName, Uuid } from '../core/schemas.js';

export const ServiceProviderForm = Type.Object(
  {
    title: RequiredName({ description: 'name of the service provider' }),
    accessPoint: AccessPointIdentifiable,
  },
  { title: 'ServiceProviderForm' },
);
export type ServiceProviderForm = Static<typeof ServiceProviderForm>;

/** The specification's ServiceProvider (identifier, title), with the access point that delivers its participants' documents. */
export const ServiceProvider = Type.Object(
  {
    identifier: Uuid(),
    title: Type.String({ description: 'name of the service provider' }),
    accessPoint: Nullable(Type.Object({ identifier: Uuid(), title: Type.String() }, { title: 'AccessPointSummary' })),
  },
  { title: 'ServiceProviderDetails' },
);
export type ServiceProvider = Static<typeof ServiceProvider>;

/** How users name the service provider they act for. */
export const ServiceProviderIdentifiable = IdentifiableByUuid('ServiceProviderIdentifiable');

export const ServiceProviderPage = PageSchema(ServiceProvider, 'ServiceProviderPage');
export const ServiceProviderQuery = Type.Object(PageQuery);
