import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CATALOGUE_MANAGERS, ROLES } from '../http/auth.js';
import { pageOf, pageRequest } from '../http/paging.js';
import { UuidParams } from '../http/schemas.js';
import {
  ACCESS_POINT_PROVIDER_SORTABLE, ACCESS_POINT_PROVIDER_TIE_BREAKER, deleteAccessPointProvider, findAccessPointProviders,
  getAccessPointProvider, insertAccessPointProvider, updateAccessPointProvider,
} from './repository.js';
import { AccessPointProvider, AccessPointProviderForm, AccessPointProviderPage, AccessPointProviderQuery } from './schemas.js';

const FORM = 'accessPointProviderFormDTO';

/** Access point providers: read by every registered caller (access points show them anyway), managed by the authority. */
const accessPointProviders: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', {
    schema: { querystring: AccessPointProviderQuery, response: { 200: AccessPointProviderPage } },
    config: { access: ROLES, mediaTypes: ['access-point-providers.find'] },
  }, async (request) => {
    const page = pageRequest(request.query, ACCESS_POINT_PROVIDER_SORTABLE, ACCESS_POINT_PROVIDER_TIE_BREAKER);
    const { total, rows } = await findAccessPointProviders(app.db, page);
    return pageOf(rows, total, page);
  });

  app.get('/:identifier', {
    schema: { params: UuidParams, response: { 200: AccessPointProvider } },
    config: { access: ROLES, mediaTypes: ['access-point-providers.get'] },
  }, async (request) => getAccessPointProvider(app.db, request.params.identifier));

  app.post('/', {
    schema: { body: AccessPointProviderForm, response: { 201: AccessPointProvider } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['access-point-providers.add'], objectName: FORM },
  }, async (request, reply) => {
    const provider = await app.db.transaction(async (tx) => getAccessPointProvider(tx, await insertAccessPointProvider(tx, request.body)));
    return reply.status(201).send(provider);
  });

  app.put('/:identifier', {
    schema: { params: UuidParams, body: AccessPointProviderForm, response: { 200: AccessPointProvider } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['access-point-providers.update'], objectName: FORM },
  }, async (request) => app.db.transaction(async (tx) => {
    await updateAccessPointProvider(tx, request.params.identifier, request.body);
    return getAccessPointProvider(tx, request.params.identifier);
  }));

  app.delete('/:identifier', {
    schema: { params: UuidParams },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['access-point-providers.delete'] },
  }, async (request, reply) => {
    await app.db.transaction((tx) => deleteAccessPointProvider(tx, request.params.identifier));
    return reply.status(204).send();
  });
};

export default accessPointProviders;
