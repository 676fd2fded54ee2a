import { CATALOGUE_MANAGERS, EVERYONE } from '../http/auth.js';
import { catalogueReads } from '../http/catalogue-reads.js';
import { managedResourceRoutes, mediaTypesNamed } from '../http/resource-routes.js';
import {
  CAPABILITY_SORTABLE, CAPABILITY_TIE_BREAKER, deleteCapability, findCapabilities, getCapability, insertCapability, updateCapability,
} from './repository.js';
import { Capability, CapabilityForm, CapabilityPage, CapabilityQuery } from './schemas.js';

/** Capabilities are read like the processes that list them (anonymous callers too), and managed by the authority. */
export default managedResourceRoutes({
  mediaTypes: mediaTypesNamed('capabilities'),
  change: 'capability',
  objectName: 'capabilityFormDTO',
  schemas: { form: CapabilityForm, item: Capability, page: CapabilityPage, query: CapabilityQuery },
  access: { read: EVERYONE, write: CATALOGUE_MANAGERS },
  sortable: CAPABILITY_SORTABLE,
  tieBreaker: CAPABILITY_TIE_BREAKER,
  find: findCapabilities,
  get: getCapability,
  cached: catalogueReads('capability'),
  record: async (_tx, form) => form,
  insert: insertCapability,
  update: updateCapability,
  remove: deleteCapability,
});
