import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CATALOGUE_MANAGERS, ROLES } from '../http/auth.js';
import { pageOf, pageRequest } from '../http/paging.js';
import { UuidParams } from '../http/schemas.js';
import {
  deleteTransportProfile, findTransportProfiles, getTransportProfile, insertTransportProfile, TRANSPORT_PROFILE_SORTABLE,
  TRANSPORT_PROFILE_TIE_BREAKER, updateTransportProfile,
} from './repository.js';
import { TransportProfile, TransportProfileForm, TransportProfilePage, TransportProfileQuery } from './schemas.js';

const FORM = 'transportProfileFormDTO';

/** The known transport profiles that endpoints may use; the authority extends the list. */
const transportProfiles: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', {
    schema: { querystring: TransportProfileQuery, response: { 200: TransportProfilePage } },
    config: { access: ROLES, mediaTypes: ['transport-profiles.find'] },
  }, async (request) => {
    const page = pageRequest(request.query, TRANSPORT_PROFILE_SORTABLE, TRANSPORT_PROFILE_TIE_BREAKER);
    const { total, rows } = await findTransportProfiles(app.db, page);
    return pageOf(rows, total, page);
  });

  app.get('/:identifier', {
    schema: { params: UuidParams, response: { 200: TransportProfile } },
    config: { access: ROLES, mediaTypes: ['transport-profiles.get'] },
  }, async (request) => getTransportProfile(app.db, request.params.identifier));

  app.post('/', {
    schema: { body: TransportProfileForm, response: { 201: TransportProfile } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['transport-profiles.add'], objectName: FORM },
  }, async (request, reply) => {
    const profile = await app.db.transaction(async (tx) => getTransportProfile(tx, await insertTransportProfile(tx, request.body)));
    return reply.status(201).send(profile);
  });

  app.put('/:identifier', {
    schema: { params: UuidParams, body: TransportProfileForm, response: { 200: TransportProfile } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['transport-profiles.update'], objectName: FORM },
  }, async (request) => app.db.transaction(async (tx) => {
    await updateTransportProfile(tx, request.params.identifier, request.body);
    return getTransportProfile(tx, request.params.identifier);
  }));

  app.delete('/:identifier', {
    schema: { params: UuidParams },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['transport-profiles.delete'] },
  }, async (request, reply) => {
    await app.db.transaction((tx) => deleteTransportProfile(tx, request.params.identifier));
    return reply.status(204).send();
  });
};

export default transportProfiles;
