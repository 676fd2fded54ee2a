import { CATALOGUE_MANAGERS, ROLES } from '../http/auth.js';
import { catalogueReads } from '../http/catalogue-reads.js';
import { managedResourceRoutes, mediaTypesNamed } from '../http/resource-routes.js';
import {
  deleteTransportProfile, findTransportProfiles, getTransportProfile, insertTransportProfile, TRANSPORT_PROFILE_SORTABLE,
  TRANSPORT_PROFILE_TIE_BREAKER, updateTransportProfile,
} from './repository.js';
import { TransportProfile, TransportProfileForm, TransportProfilePage, TransportProfileQuery } from './schemas.js';

/** The known transport profiles that endpoints may use; the authority extends the list. */
export default managedResourceRoutes({
  mediaTypes: mediaTypesNamed('transport-profiles'),
  change: 'transport-profile',
  objectName: 'transportProfileFormDTO',
  schemas: { form: TransportProfileForm, item: TransportProfile, page: TransportProfilePage, query: TransportProfileQuery },
  access: { read: ROLES, write: CATALOGUE_MANAGERS },
  sortable: TRANSPORT_PROFILE_SORTABLE,
  tieBreaker: TRANSPORT_PROFILE_TIE_BREAKER,
  find: findTransportProfiles,
  get: getTransportProfile,
  cached: catalogueReads('transport-profile'),
  record: async (_tx, form) => form,
  insert: insertTransportProfile,
  update: updateTransportProfile,
  remove: deleteTransportProfile,
});
