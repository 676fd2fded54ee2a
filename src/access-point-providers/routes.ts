import { CATALOGUE_MANAGERS, ROLES } from '../http/auth.js';
import { catalogueReads } from '../http/catalogue-reads.js';
import { managedResourceRoutes, mediaTypesNamed } from '../http/resource-routes.js';
import {
  ACCESS_POINT_PROVIDER_SORTABLE, ACCESS_POINT_PROVIDER_TIE_BREAKER, deleteAccessPointProvider, findAccessPointProviders,
  getAccessPointProvider, insertAccessPointProvider, updateAccessPointProvider,
} from './repository.js';
import { AccessPointProvider, AccessPointProviderForm, AccessPointProviderPage, AccessPointProviderQuery } from './schemas.js';

/** Access point providers: read by every registered caller (access points show them anyway), managed by the authority. */
export default managedResourceRoutes({
  mediaTypes: mediaTypesNamed('access-point-providers'),
  change: 'access-point-provider',
  objectName: 'accessPointProviderFormDTO',
  schemas: { form: AccessPointProviderForm, item: AccessPointProvider, page: AccessPointProviderPage, query: AccessPointProviderQuery },
  access: { read: ROLES, write: CATALOGUE_MANAGERS },
  sortable: ACCESS_POINT_PROVIDER_SORTABLE,
  tieBreaker: ACCESS_POINT_PROVIDER_TIE_BREAKER,
  find: findAccessPointProviders,
  get: getAccessPointProvider,
  cached: catalogueReads('access-point-provider'),
  record: async (_tx, form) => form,
  insert: insertAccessPointProvider,
  update: updateAccessPointProvider,
  remove: deleteAccessPointProvider,
});
