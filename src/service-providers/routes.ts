import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ACCESS_POINT_REFERENCE } from '../access-points/repository.js';
import type { Queryable } from '../db/database.js';
import { resolveReference } from '../db/references.js';
import { CATALOGUE_MANAGERS, ROLES } from '../http/auth.js';
import { ValidationError } from '../http/errors.js';
import { pageOf, pageRequest } from '../http/paging.js';
import { UuidParams } from '../http/schemas.js';
import {
  deleteServiceProvider, findServiceProviders, getServiceProvider, insertServiceProvider, SERVICE_PROVIDER_SORTABLE,
  SERVICE_PROVIDER_TIE_BREAKER, updateServiceProvider, type ServiceProviderRecord,
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
const serviceProviders: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', {
    schema: { querystring: ServiceProviderQuery, response: { 200: ServiceProviderPage } },
    config: { access: ROLES, mediaTypes: ['service-providers.find'] },
  }, async (request) => {
    const page = pageRequest(request.query, SERVICE_PROVIDER_SORTABLE, SERVICE_PROVIDER_TIE_BREAKER);
    const { total, rows } = await findServiceProviders(app.db, page);
    return pageOf(rows, total, page);
  });

  app.get('/:identifier', {
    schema: { params: UuidParams, response: { 200: ServiceProvider } },
    config: { access: ROLES, mediaTypes: ['service-providers.get'] },
  }, async (request) => getServiceProvider(app.db, request.params.identifier));

  app.post('/', {
    schema: { body: ServiceProviderForm, response: { 201: ServiceProvider } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['service-providers.add'], objectName: FORM },
  }, async (request, reply) => {
    const provider = await app.db.transaction(async (tx) => getServiceProvider(tx, await insertServiceProvider(tx, await recordOf(tx, request.body))));
    return reply.status(201).send(provider);
  });

  app.put('/:identifier', {
    schema: { params: UuidParams, body: ServiceProviderForm, response: { 200: ServiceProvider } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['service-providers.update'], objectName: FORM },
  }, async (request) => {
    const { identifier } = request.params;
    return app.db.transaction(async (tx) => {
      await getServiceProvider(tx, identifier);
      await updateServiceProvider(tx, identifier, await recordOf(tx, request.body));
      return getServiceProvider(tx, identifier);
    });
  });

  app.delete('/:identifier', {
    schema: { params: UuidParams },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['service-providers.delete'] },
  }, async (request, reply) => {
    await app.db.transaction((tx) => deleteServiceProvider(tx, request.params.identifier));
    return reply.status(204).send();
  });
};

export default serviceProviders;
