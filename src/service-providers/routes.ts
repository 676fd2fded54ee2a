import { ACCESS_POINT_REFERENCE } from '../access-points/repository.js';
import type { Queryable } from '../db/database.js';
import { resolveReference } from '../db/references.js';
import { CATALOGUE_MANAGERS, ROLES } from '../http/auth.js';
import { ValidationError } from '../core/errors.js';
import { managedResourceRoutes, mediaTypesNamed } from '../http/resource-routes.js';
import {
  deleteServiceProvider,
  insertServiceProvider,
  SERVICE_PROVIDER_TABLE,
  updateServiceProvider,
  type ServiceProviderRecord,
} from './repository.js';
import { ServiceProvider, ServiceProviderForm, ServiceProviderPage, ServiceProviderQuery } from './schemas.js';

const FORM = 'serviceProviderFormDTO';

async function recordOf(tx: Queryable, form: ServiceProviderForm): Promise<ServiceProviderRecord> {
  const accessPoint = await resolveReference(tx, ACCESS_POINT_REFERENCE, form.accessPoint, 'accessPoint');
  if (!accessPoint.id) throw ValidationError.of(FORM, accessPoint.errors);
  return { title: form.title, accessPointId: accessPoint.id };
}

/**
 * Service providers: read by every registered caller (a provider needs the identifier of the one it transfers a
 * participant to), managed by the authority.
 */
export default managedResourceRoutes({
  mediaTypes: mediaTypesNamed('service-providers'),
  table: SERVICE_PROVIDER_TABLE,
  objectName: FORM,
  schemas: { form: ServiceProviderForm, item: ServiceProvider, page: ServiceProviderPage, query: ServiceProviderQuery },
  access: { read: ROLES, write: CATALOGUE_MANAGERS },
  record: recordOf,
  insert: insertServiceProvider,
  update: updateServiceProvider,
  remove: deleteServiceProvider,
});
