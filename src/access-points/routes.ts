import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ACCESS_POINT_PROVIDER_REFERENCE } from '../access-point-providers/repository.js';
import type { Queryable } from '../db/database.js';
import { resolveEach, resolveReference } from '../db/references.js';
import { CATALOGUE_MANAGERS, ROLES } from '../http/auth.js';
import { ValidationError } from '../http/errors.js';
import { pageOf, pageRequest } from '../http/paging.js';
import { UuidParams } from '../http/schemas.js';
import { TRANSPORT_PROFILE_REFERENCE } from '../transport-profiles/repository.js';
import {
  ACCESS_POINT_SORTABLE, ACCESS_POINT_TIE_BREAKER, deleteAccessPoint, findAccessPoints, getAccessPoint, insertAccessPoint,
  newlyUsedRestrictedProfiles, updateAccessPoint, type AccessPointRecord,
} from './repository.js';
import { AccessPoint, AccessPointForm, AccessPointPage, AccessPointQuery } from './schemas.js';

const FORM = 'accessPointFormDTO';

/** The media types of an operation: the specified lower-case spelling first, `accessPoints.*` also accepted. */
const mediaTypesOf = (operation: string) => [`accesspoints.${operation}`, `accessPoints.${operation}`];

/**
 * Resolves the provider and the transport profiles of a form, every violation at once. An endpoint may not newly
 * use a restricted (deprecated) transport profile; endpoints that already use one keep it.
 */
async function recordOf(tx: Queryable, form: AccessPointForm, ownId: string | null = null): Promise<AccessPointRecord> {
  const [provider, profiles] = await Promise.all([
    resolveReference(tx, ACCESS_POINT_PROVIDER_REFERENCE, form.provider, 'provider'),
    resolveEach(tx, TRANSPORT_PROFILE_REFERENCE, form.endpoints.map((endpoint) => endpoint.transportProfile),
      (index) => `endpoints[${index}].transportProfile`),
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
      errors.push({ field: `${field}.transportProfile`, code: 'Restricted', rejectedValue: endpoint.transportProfile, typeName: 'TransportProfileIdentifiable',
        defaultMessage: 'the transport profile is restricted (deprecated): no endpoint may newly use it' });
    }
    const key = `${endpoint.url}\u0000${profileId}`;
    if (seen.has(key)) {
      errors.push({ field, code: 'UniqueElements', rejectedValue: endpoint, typeName: 'EndpointForm',
        defaultMessage: 'another endpoint has the same url and transport profile' });
    }
    seen.add(key);
  });
  if (errors.length > 0) throw ValidationError.of(FORM, errors);
  return {
    title: form.title,
    providerId: provider.id as string,
    endpoints: form.endpoints.map((endpoint, index) => ({
      url: endpoint.url,
      transportProfileId: profiles.ids[index] as string,
      certificateTypes: endpoint.transportProfile.certificateTypes ?? [],
    })),
  };
}

/** Access points: found and read by every registered caller as specified, managed by the authority. */
const accessPoints: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', {
    schema: { querystring: AccessPointQuery, response: { 200: AccessPointPage } },
    config: { access: ROLES, mediaTypes: mediaTypesOf('find') },
  }, async (request) => {
    const page = pageRequest(request.query, ACCESS_POINT_SORTABLE, ACCESS_POINT_TIE_BREAKER);
    const { total, rows } = await findAccessPoints(app.db, page);
    return pageOf(rows, total, page);
  });

  app.get('/:identifier', {
    schema: { params: UuidParams, response: { 200: AccessPoint } },
    config: { access: ROLES, mediaTypes: mediaTypesOf('get') },
  }, async (request) => getAccessPoint(app.db, request.params.identifier));

  app.post('/', {
    schema: { body: AccessPointForm, response: { 201: AccessPoint } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: mediaTypesOf('add'), objectName: FORM },
  }, async (request, reply) => {
    const accessPoint = await app.db.transaction(async (tx) => getAccessPoint(tx, await insertAccessPoint(tx, await recordOf(tx, request.body))));
    return reply.status(201).send(accessPoint);
  });

  app.put('/:identifier', {
    schema: { params: UuidParams, body: AccessPointForm, response: { 200: AccessPoint } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: mediaTypesOf('update'), objectName: FORM },
  }, async (request) => {
    const { identifier } = request.params;
    return app.db.transaction(async (tx) => {
      await getAccessPoint(tx, identifier);
      await updateAccessPoint(tx, identifier, await recordOf(tx, request.body, identifier));
      return getAccessPoint(tx, identifier);
    });
  });

  app.delete('/:identifier', {
    schema: { params: UuidParams },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: mediaTypesOf('delete') },
  }, async (request, reply) => {
    await app.db.transaction((tx) => deleteAccessPoint(tx, request.params.identifier));
    return reply.status(204).send();
  });
};

export default accessPoints;
