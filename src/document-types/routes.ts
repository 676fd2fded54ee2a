import type { Queryable } from '../db/database.js';
import { PROCESS_REFERENCE, resolveReferences } from '../db/references.js';
import { CATALOGUE_MANAGERS, EVERYONE } from '../http/auth.js';
import { ValidationError } from '../core/errors.js';
import { managedResourceRoutes, mediaTypesNamed } from '../http/resource-routes.js';
import { parseQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import {
  deleteDocumentType,
  DOCUMENT_TYPE_TABLE,
  insertDocumentType,
  updateDocumentType,
  type DocumentTypeRecord,
} from './repository.js';
import { REMOVED_FROM_KEEPS_NULL } from '../processes/schemas.js';
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
    removedFrom: form.removedFrom,
    processIds: processes.ids,
  };
}

/** The catalogue's document types: read by everyone, anonymous callers included; managed by the authority. */
export default managedResourceRoutes({
  mediaTypes: mediaTypesNamed('document-types'),
  table: DOCUMENT_TYPE_TABLE,
  objectName: FORM,
  schemas: { form: DocumentTypeForm, item: DocumentType, page: DocumentTypePage, query: DocumentTypeQuery },
  access: { read: EVERYONE, write: CATALOGUE_MANAGERS },
  record: recordOf,
  keepsNull: REMOVED_FROM_KEEPS_NULL,
  insert: insertDocumentType,
  update: updateDocumentType,
  remove: deleteDocumentType,
});
