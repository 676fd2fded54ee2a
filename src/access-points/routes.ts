import { ACCESS_POINT_PROVIDER_REFERENCE } from '../access-point-providers/repository.js';
import type { Queryable } from '../db/database.js';
import { resolveEach, resolveReference } from '../db/references.js';
import { CATALOGUE_MANAGERS, ROLES } from '../http/auth.js';
import { ValidationError } from '../core/errors.js';
import { managedResourceRoutes } from '../http/resource-routes.js';
import { TRANSPORT_PROFILE_REFERENCE } from '../transport-profiles/repository.js';
import {
  ACCESS_POINT_TABLE,
  deleteAccessPoint,
  insertAccessPoint,
  newlyUsedRestrictedProfiles,
  updateAccessPoint,
  type AccessPointRecord,
} from './repository.js';
import { checkCertificate } from './certificates.js';
import { AccessPoint, AccessPointForm, AccessPointPage, AccessPointQuery, type EndpointForm } from './schemas.js';

const FORM = 'accessPointFormDTO';

/**
 * Resolves the provider and the transport profiles of a form, every violation at once. An endpoint may not newly
 * use a restricted (deprecated) transport profile; endpoints that already use one keep it.
 */
async function recordOf(tx: Queryable, form: AccessPointForm, ownId: string | null = null): Promise<AccessPointRecord> {
  const [provider, profiles] = await Promise.all([
    resolveReference(tx, ACCESS_POINT_PROVIDER_REFERENCE, form.provider, 'provider'),
    resolveEach(
      tx,
      TRANSPORT_PROFILE_REFERENCE,
      form.endpoints.map((endpoint) => endpoint.transportProfile),
      (index) => `endpoints[${index}].transportProfile`,
    ),
  ]);
  const known = profiles.ids.filter((id): id is string => id !== null);
  const restricted = await newlyUsedRestrictedProfiles(tx, known, ownId);
  const errors = [...provider.errors, ...profiles.errors];
  const seen = new Set<string>();
  form.endpoints.forEach((endpoint, index) => {
    const profileId = profiles.ids[index];
    if (!profileId) return;
    const field = `endpoints[${index}]`;
    if (restricted.has(profileId)) {
      errors.push({
        field: `${field}.transportProfile`,
        code: 'Restricted',
        rejectedValue: endpoint.transportProfile,
        typeName: 'TransportProfileIdentifiable',
        defaultMessage: 'the transport profile is restricted (deprecated): no endpoint may newly use it',
      });
    }
    const key = `${endpoint.url}\u0000${profileId}`;
    if (seen.has(key)) {
      errors.push({
        field,
        code: 'UniqueElements',
        rejectedValue: endpoint,
        typeName: 'EndpointForm',
        defaultMessage: 'another endpoint has the same url and transport profile',
      });
    }
    seen.add(key);
    errors.push(...publicationErrors(endpoint, field));
  });
  if (errors.length > 0) throw ValidationError.of(FORM, errors);
  return {
    title: form.title,
    providerId: provider.id as string,
    endpoints: form.endpoints.map((endpoint, index) => ({
      url: endpoint.url,
      transportProfileId: profiles.ids[index] as string,
      certificateTypes: endpoint.transportProfile.certificateTypes ?? [],
      ...publicationOf(endpoint),
    })),
  };
}

/** The certificate must parse and be unexpired; the service must not expire before it activates. */
function publicationErrors(endpoint: EndpointForm, field: string) {
  const errors = [];
  if (endpoint.certificate !== undefined) {
    const checked = checkCertificate(endpoint.certificate);
    if (!checked.ok) {
      errors.push({
        field: `${field}.certificate`,
        code: checked.code,
        rejectedValue: endpoint.certificate,
        defaultMessage: checked.message,
      });
    }
  }
  const { serviceActivationDate: from, serviceExpirationDate: until } = endpoint;
  if (from !== undefined && until !== undefined && Date.parse(until) <= Date.parse(from)) {
    errors.push({
      field: `${field}.serviceExpirationDate`,
      code: 'Order',
      rejectedValue: until,
      defaultMessage: 'the service expiration date must be after its activation date',
    });
  }
  return errors;
}

function publicationOf(endpoint: EndpointForm) {
  const checked = endpoint.certificate === undefined ? undefined : checkCertificate(endpoint.certificate);
  return {
    certificate: checked?.ok ? checked.base64Der : null,
    serviceDescription: endpoint.serviceDescription ?? null,
    technicalContactUrl: endpoint.technicalContactUrl ?? null,
    requireBusinessLevelSignature: endpoint.requireBusinessLevelSignature ?? null,
    activationDate: endpoint.serviceActivationDate ?? null,
    expirationDate: endpoint.serviceExpirationDate ?? null,
  };
}

/** Access points: found and read by every registered caller as specified, managed by the authority. */
export default managedResourceRoutes({
  mediaTypes: (operation) => [`accesspoints.${operation}`, `accessPoints.${operation}`],
  table: ACCESS_POINT_TABLE,
  objectName: FORM,
  schemas: { form: AccessPointForm, item: AccessPoint, page: AccessPointPage, query: AccessPointQuery },
  access: { read: ROLES, write: CATALOGUE_MANAGERS },
  record: recordOf,
  insert: insertAccessPoint,
  update: updateAccessPoint,
  remove: deleteAccessPoint,
});
