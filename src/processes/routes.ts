import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { resolveReferences, CAPABILITY_REFERENCE, DOCUMENT_TYPE_REFERENCE, PROCESS_REFERENCE } from '../db/references.js';
import type { Queryable } from '../db/database.js';
import { CATALOGUE_MANAGERS, EVERYONE } from '../http/auth.js';
import { ValidationError } from '../http/errors.js';
import { pageOf, pageRequest } from '../http/paging.js';
import { parseQualifiedIdentifier, UuidParams } from '../http/schemas.js';
import { sendJsonArray } from '../http/streaming.js';
import {
  deleteProcess, findProcesses, getProcess, insertProcess, PROCESS_SORTABLE, PROCESS_TIE_BREAKER, streamProcesses,
  updateProcess, type ProcessRecord,
} from './repository.js';
import { Process, ProcessForm, ProcessPage, ProcessQuery } from './schemas.js';

const FORM = 'processFormDTO';

/** Resolves the references of a form; every unknown one is reported at once. */
async function recordOf(tx: Queryable, form: ProcessForm, ownId?: string): Promise<ProcessRecord> {
  // One after the other: a transaction is one connection, which runs one query at a time anyway.
  const capabilities = await resolveReferences(tx, CAPABILITY_REFERENCE, form.capabilities, 'capabilities');
  const documentTypes = await resolveReferences(tx, DOCUMENT_TYPE_REFERENCE, form.documentTypes, 'documentTypes');
  const dependencies = await resolveReferences(tx, PROCESS_REFERENCE, form.dependencies, 'dependencies');
  const errors = [...capabilities.errors, ...documentTypes.errors, ...dependencies.errors];
  const selfIndex = ownId ? dependencies.ids.indexOf(ownId) : -1;
  if (selfIndex >= 0) {
    errors.push({ field: 'dependencies', code: 'SelfDependency', rejectedValue: ownId, typeName: 'Set', defaultMessage: 'a process cannot depend on itself' });
  }
  if (errors.length > 0) throw ValidationError.of(FORM, errors);
  return {
    qualifiedIdentifier: parseQualifiedIdentifier(form.qualifiedIdentifier) as NonNullable<ReturnType<typeof parseQualifiedIdentifier>>,
    domain: form.domain,
    title: form.title,
    alias: form.alias ?? null,
    restricted: form.restricted,
    visible: form.visible,
    requiredICDs: form.requiredICDs,
    capabilityIds: capabilities.ids,
    documentTypeIds: documentTypes.ids,
    dependencyIds: dependencies.ids,
  };
}

const processes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', {
    schema: { querystring: ProcessQuery, response: { 200: ProcessPage } },
    config: { access: EVERYONE, mediaTypes: ['processes.find'], streamMediaType: 'processes.stream', objectName: 'processFilter' },
  }, async (request, reply) => {
    const page = pageRequest(request.query, PROCESS_SORTABLE, PROCESS_TIE_BREAKER);
    if (request.wantsStream) return sendJsonArray(reply, Process, streamProcesses(app.db, request.query, page.orderBy));
    const { total, rows } = await findProcesses(app.db, request.query, page);
    return pageOf(rows, total, page);
  });

  app.get('/:identifier', {
    schema: { params: UuidParams, response: { 200: Process } },
    config: { access: EVERYONE, mediaTypes: ['processes.get'] },
  }, async (request) => getProcess(app.db, request.params.identifier));

  app.post('/', {
    schema: { body: ProcessForm, response: { 201: Process } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['processes.add'], objectName: FORM },
  }, async (request, reply) => {
    const process = await app.db.transaction(async (tx) => {
      const id = await insertProcess(tx, await recordOf(tx, request.body));
      return getProcess(tx, id);
    });
    return reply.status(201).send(process);
  });

  app.put('/:identifier', {
    schema: { params: UuidParams, body: ProcessForm, response: { 200: Process } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['processes.update'], objectName: FORM },
  }, async (request) => {
    const { identifier } = request.params;
    return app.db.transaction(async (tx) => {
      await getProcess(tx, identifier);
      await updateProcess(tx, identifier, await recordOf(tx, request.body, identifier));
      return getProcess(tx, identifier);
    });
  });

  app.delete('/:identifier', {
    schema: { params: UuidParams },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['processes.delete'] },
  }, async (request, reply) => {
    await app.db.transaction((tx) => deleteProcess(tx, request.params.identifier));
    return reply.status(204).send();
  });
};

export default processes;
