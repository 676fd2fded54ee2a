import {
  resolveReferences,
  CAPABILITY_REFERENCE,
  DOCUMENT_TYPE_REFERENCE,
  PROCESS_REFERENCE,
} from '../db/references.js';
import type { Queryable } from '../db/database.js';
import type { PageRequest } from '../core/paging.js';
import { CATALOGUE_MANAGERS, EVERYONE } from '../http/auth.js';
import { ValidationError } from '../core/errors.js';
import { unknownIcdErrors } from '../identifier-schemes/checks.js';
import { readIdentifierSchemes } from '../identifier-schemes/repository.js';
import { IdentifierSchemeList } from '../identifier-schemes/schemes.js';
import { managedResourceRoutes, mediaTypesNamed } from '../http/resource-routes.js';
import { parseQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import {
  deleteProcess,
  findProcesses,
  insertProcess,
  PROCESS_TABLE,
  streamProcesses,
  updateProcess,
  type ProcessRecord,
} from './repository.js';
import { Process, ProcessFilter, ProcessForm, ProcessPage, ProcessQuery, REMOVED_FROM_KEEPS_NULL } from './schemas.js';

const FORM = 'processFormDTO';

/** Resolves the references of a form; every unknown one is reported at once. */
async function recordOf(tx: Queryable, form: ProcessForm, ownId?: string): Promise<ProcessRecord> {
  // One after the other: a transaction is one connection, which runs one query at a time anyway.
  const capabilities = await resolveReferences(tx, CAPABILITY_REFERENCE, form.capabilities, 'capabilities');
  const documentTypes = await resolveReferences(tx, DOCUMENT_TYPE_REFERENCE, form.documentTypes, 'documentTypes');
  const dependencies = await resolveReferences(tx, PROCESS_REFERENCE, form.dependencies, 'dependencies');
  const schemes = new IdentifierSchemeList(await readIdentifierSchemes(tx));
  const errors = [
    ...unknownIcdErrors(schemes, 'requiredICDs', form.requiredICDs),
    ...capabilities.errors,
    ...documentTypes.errors,
    ...dependencies.errors,
  ];
  const selfIndex = ownId ? dependencies.ids.indexOf(ownId) : -1;
  if (selfIndex >= 0) {
    errors.push({
      field: 'dependencies',
      code: 'SelfDependency',
      rejectedValue: ownId,
      typeName: 'Set',
      defaultMessage: 'a process cannot depend on itself',
    });
  }
  if (errors.length > 0) throw ValidationError.of(FORM, errors);
  return {
    // The schema's pattern guarantees that the string form parses.
    qualifiedIdentifier: parseQualifiedIdentifier(form.qualifiedIdentifier) as QualifiedIdentifier,
    domain: form.domain,
    title: form.title,
    alias: form.alias ?? null,
    restricted: form.restricted,
    visible: form.visible,
    removedFrom: form.removedFrom,
    requiredICDs: form.requiredICDs,
    capabilityIds: capabilities.ids,
    documentTypeIds: documentTypes.ids,
    dependencyIds: dependencies.ids,
  };
}

/** The catalogue cache holds every process; a filter (a search, a domain, ...) is the database's. */
const filtersNothing = (query: ProcessFilter) =>
  Object.keys(ProcessFilter.properties).every((name) => query[name as keyof ProcessFilter] === undefined);

/** The processes the filter finds; 400 for a required ICD the registry does not know. */
async function findFiltered(db: Queryable, page: PageRequest, query: ProcessFilter) {
  const unknown = unknownIcdErrors(
    new IdentifierSchemeList(await readIdentifierSchemes(db)),
    'requiredIcd',
    query.requiredIcd,
  );
  if (unknown.length > 0) throw ValidationError.of('queryParameters', unknown);
  return findProcesses(db, query, page);
}

/** The catalogue's processes: read by everyone, anonymous callers included; managed by the authority. */
export default managedResourceRoutes({
  mediaTypes: mediaTypesNamed('processes'),
  table: PROCESS_TABLE,
  objectName: FORM,
  schemas: { form: ProcessForm, item: Process, page: ProcessPage, query: ProcessQuery },
  access: { read: EVERYONE, write: CATALOGUE_MANAGERS },
  filters: { find: (db, page, query) => findFiltered(db, page, query), none: filtersNothing },
  stream: { mediaType: 'processes.stream', rows: (db, query, orderBy) => streamProcesses(db, query, orderBy) },
  record: (tx, form, id) => recordOf(tx, form, id ?? undefined),
  keepsNull: REMOVED_FROM_KEEPS_NULL,
  insert: insertProcess,
  update: updateProcess,
  remove: deleteProcess,
});
