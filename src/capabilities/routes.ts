import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CATALOGUE_MANAGERS, EVERYONE } from '../http/auth.js';
import { pageOf, pageRequest } from '../http/paging.js';
import { UuidParams } from '../http/schemas.js';
import {
  CAPABILITY_SORTABLE, CAPABILITY_TIE_BREAKER, deleteCapability, findCapabilities, getCapability, insertCapability, updateCapability,
} from './repository.js';
import { Capability, CapabilityForm, CapabilityPage, CapabilityQuery } from './schemas.js';

const FORM = 'capabilityFormDTO';

/** Capabilities are read like the processes that list them (anonymous callers too), and managed by the authority. */
const capabilities: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', {
    schema: { querystring: CapabilityQuery, response: { 200: CapabilityPage } },
    config: { access: EVERYONE, mediaTypes: ['capabilities.find'] },
  }, async (request) => {
    const page = pageRequest(request.query, CAPABILITY_SORTABLE, CAPABILITY_TIE_BREAKER);
    const { total, rows } = await findCapabilities(app.db, page);
    return pageOf(rows, total, page);
  });

  app.get('/:identifier', {
    schema: { params: UuidParams, response: { 200: Capability } },
    config: { access: EVERYONE, mediaTypes: ['capabilities.get'] },
  }, async (request) => getCapability(app.db, request.params.identifier));

  app.post('/', {
    schema: { body: CapabilityForm, response: { 201: Capability } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['capabilities.add'], objectName: FORM },
  }, async (request, reply) => {
    const capability = await app.db.transaction(async (tx) => getCapability(tx, await insertCapability(tx, request.body)));
    return reply.status(201).send(capability);
  });

  app.put('/:identifier', {
    schema: { params: UuidParams, body: CapabilityForm, response: { 200: Capability } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['capabilities.update'], objectName: FORM },
  }, async (request) => app.db.transaction(async (tx) => {
    await updateCapability(tx, request.params.identifier, request.body);
    return getCapability(tx, request.params.identifier);
  }));

  app.delete('/:identifier', {
    schema: { params: UuidParams },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['capabilities.delete'] },
  }, async (request, reply) => {
    await app.db.transaction((tx) => deleteCapability(tx, request.params.identifier));
    return reply.status(204).send();
  });
};

export default capabilities;
