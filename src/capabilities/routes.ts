import { CATALOGUE_MANAGERS, EVERYONE } from '../http/auth.js';
import { managedResourceRoutes, mediaTypesNamed } from '../http/resource-routes.js';
import { CAPABILITY_TABLE, deleteCapability, insertCapability, updateCapability } from './repository.js';
import { Capability, CapabilityForm, CapabilityPage, CapabilityQuery } from './schemas.js';

/** Capabilities are read like the processes that list them (anonymous callers too), and managed by the authority. */
export default managedResourceRoutes({
  mediaTypes: mediaTypesNamed('capabilities'),
  table: CAPABILITY_TABLE,
  objectName: 'capabilityFormDTO',
  schemas: { form: CapabilityForm, item: Capability, page: CapabilityPage, query: CapabilityQuery },
  access: { read: EVERYONE, write: CATALOGUE_MANAGERS },
  record: async (_tx, form) => form,
  insert: insertCapability,
  update: updateCapability,
  remove: deleteCapability,
});
