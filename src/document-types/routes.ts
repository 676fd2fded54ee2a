import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Queryable } from '../db/database.js';
import { PROCESS_REFERENCE, resolveReferences } from '../db/references.js';
import { CATALOGUE_MANAGERS, EVERYONE } from '../http/auth.js';
import { ValidationError } from '../http/errors.js';
import { pageOf, pageRequest } from '../http/paging.js';
import { parseQualifiedIdentifier, UuidParams, type QualifiedIdentifier } from '../http/schemas.js';
import {
  deleteDocumentType, DOCUMENT_TYPE_SORTABLE, DOCUMENT_TYPE_TIE_BREAKER, findDocumentTypes, getDocumentType,
  insertDocumentType, updateDocumentType, type DocumentTypeRecord,
} from './repository.js';
import { DocumentType, DocumentTypeForm, DocumentTypePage, DocumentTypeQuery } from './schemas.js';

const FORM = 'documentTypeFormDTO';

/** Resolves the processes of a form; every unknown one is reported at once. */
async function recordOf(tx: Queryable, form: DocumentTypeForm): Promise<DocumentTypeRecord> {
  const processes = await resolveReferences(tx, PROCESS_REFERENCE, form.processes, 'processes');
  if (processes.errors.length > 0) throw ValidationError.of(FORM, processes.errors);
  return {
    // The schema's pattern guarantees that the string form parses.
    qualifiedIdentifier: parseQualifiedIdentifier(form.qualifiedIdentifier) as QualifiedIdentifier,
    title: form.title,
    visible: form.visible,
    processIds: processes.ids,
  };
}

const documentTypes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', {
    schema: { querystring: DocumentTypeQuery, response: { 200: DocumentTypePage } },
    config: { access: EVERYONE, mediaTypes: ['document-types.find'] },
  }, async (request) => {
    const page = pageRequest(request.query, DOCUMENT_TYPE_SORTABLE, DOCUMENT_TYPE_TIE_BREAKER);
    const { total, rows } = await findDocumentTypes(app.db, page);
    return pageOf(rows, total, page);
  });

  app.get('/:identifier', {
    schema: { params: UuidParams, response: { 200: DocumentType } },
    config: { access: EVERYONE, mediaTypes: ['document-types.get'] },
  }, async (request) => getDocumentType(app.db, request.params.identifier));

  app.post('/', {
    schema: { body: DocumentTypeForm, response: { 201: DocumentType } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['document-types.add'], objectName: FORM },
  }, async (request, reply) => {
    const documentType = await app.db.transaction(async (tx) => {
      const id = await insertDocumentType(tx, await recordOf(tx, request.body));
      return getDocumentType(tx, id);
    });
    return reply.status(201).send(documentType);
  });

  app.put('/:identifier', {
    schema: { params: UuidParams, body: DocumentTypeForm, response: { 200: DocumentType } },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['document-types.update'], objectName: FORM },
  }, async (request) => {
    const { identifier } = request.params;
    return app.db.transaction(async (tx) => {
      await getDocumentType(tx, identifier);
      await updateDocumentType(tx, identifier, await recordOf(tx, request.body));
      return getDocumentType(tx, identifier);
    });
  });

  app.delete('/:identifier', {
    schema: { params: UuidParams },
    config: { access: CATALOGUE_MANAGERS, mediaTypes: ['document-types.delete'] },
  }, async (request, reply) => {
    await app.db.transaction((tx) => deleteDocumentType(tx, request.params.identifier));
    return reply.status(204).send();
  });
};

export default documentTypes;
