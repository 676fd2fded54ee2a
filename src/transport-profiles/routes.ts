import { CATALOGUE_MANAGERS, ROLES } from '../http/auth.js';
import { managedResourceRoutes, mediaTypesNamed } from '../http/resource-routes.js';
import {
  deleteTransportProfile,
  insertTransportProfile,
  TRANSPORT_PROFILE_TABLE,
  updateTransportProfile,
} from './repository.js';
import { TransportProfile, TransportProfileForm, TransportProfilePage, TransportProfileQuery } from './schemas.js';

/** The known transport profiles that endpoints may use; the authority extends the list. */
export default managedResourceRoutes({
  mediaTypes: mediaTypesNamed('transport-profiles'),
  table: TRANSPORT_PROFILE_TABLE,
  objectName: 'transportProfileFormDTO',
  schemas: {
    form: TransportProfileForm,
    item: TransportProfile,
    page: TransportProfilePage,
    query: TransportProfileQuery,
  },
  access: { read: ROLES, write: CATALOGUE_MANAGERS },
  record: async (_tx, form) => form,
  insert: insertTransportProfile,
  update: updateTransportProfile,
  remove: deleteTransportProfile,
});
