import { CATALOGUE_MANAGERS, ROLES } from '../http/auth.js';
import { managedResourceRoutes, mediaTypesNamed } from '../http/resource-routes.js';
import {
  ACCESS_POINT_PROVIDER_TABLE,
  deleteAccessPointProvider,
  insertAccessPointProvider,
  updateAccessPointProvider,
} from './repository.js';
import {
  AccessPointProvider,
  AccessPointProviderForm,
  AccessPointProviderPage,
  AccessPointProviderQuery,
} from './schemas.js';

/** Access point providers: read by every registered caller (access points show them anyway), managed by the authority. */
export default managedResourceRoutes({
  mediaTypes: mediaTypesNamed('access-point-providers'),
  table: ACCESS_POINT_PROVIDER_TABLE,
  objectName: 'accessPointProviderFormDTO',
  schemas: {
    form: AccessPointProviderForm,
    item: AccessPointProvider,
    page: AccessPointProviderPage,
    query: AccessPointProviderQuery,
  },
  access: { read: ROLES, write: CATALOGUE_MANAGERS },
  record: async (_tx, form) => form,
  insert: insertAccessPointProvider,
  update: updateAccessPointProvider,
  remove: deleteAccessPointProvider,
});
