import { Type, type Static } from 'typebox';
import { PageQuery, PageSchema } from '../core/paging.js';
import {
  CapabilityIdentifiable,
  DocumentTypeIdentifiable,
  FreeText,
  IcdSchema,
  Nullable,
  ProcessIdentifiable,
  OptionalName,
  QualifiedIdentifierInput,
  QualifiedIdentifierString,
  RequiredName,
  TextBound,
  TextSearch,
  Uuid,
} from '../core/schemas.js';

const REMOVAL =
  'the instant from which the entry is no longer published (SMP, Directory, public lookup), on every ' +
  "instance at once; the participants that have it keep it on their record, marked by this field. From the code list's " +
  'removal date (its start, UTC) when `registry load-catalogue` loads one, or set by the authority';

/** When an entry stops being published; null when no removal is set. */
export const RemovedFrom = Nullable(Type.String({ format: 'date-time', description: `addition: ${REMOVAL}` }));

/**
 * The removal instant in a form: absent keeps the one set, so an edit that does not know of it (the console's, an
 * older client's) never drops a code list's date; another instant moves it, and null clears it (the routes keep this
 * null: `REMOVED_FROM_KEEPS_NULL`).
 */
export const RemovedFromInput = Type.Optional(
  Nullable(
    Type.String({
      format: 'date-time',
      maxLength: 40,
      description:
        `addition: ${REMOVAL}. An ISO 8601 instant with its offset, kept to the second; absent keeps the one set, null clears it ` +
        '(the entry is published again, unless a later code-list load sets its date again)',
    }),
  ),
);

/** The form property whose null clears (every other null in a form reads as absent). */
export const REMOVED_FROM_KEEPS_NULL = ['removedFrom'] as const;

export const ProcessForm = Type.Object(
  {
    domain: FreeText({ maxLength: TextBound.name, description: 'the domain the process belongs to' }),
    title: RequiredName(),
    alias: OptionalName(),
    qualifiedIdentifier: QualifiedIdentifierInput,
    restricted: Type.Boolean({ description: 'true if the process is deprecated' }),
    visible: Type.Boolean({ description: 'true if visible in the network metadata lookup' }),
    removedFrom: RemovedFromInput,
    capabilities: Type.Array(CapabilityIdentifiable, { uniqueItems: true }),
    documentTypes: Type.Array(DocumentTypeIdentifiable, { uniqueItems: true }),
    dependencies: Type.Array(ProcessIdentifiable, { uniqueItems: true }),
    requiredICDs: Type.Array(IcdSchema, { uniqueItems: true }),
  },
  { title: 'ProcessForm' },
);
export type ProcessForm = Static<typeof ProcessForm>;

const CapabilitySummary = Type.Object({ identifier: Uuid(), title: Type.String() }, { title: 'Capability' });

const DocumentTypeSummary = Type.Object(
  {
    identifier: Uuid(),
    qualifiedIdentifier: QualifiedIdentifierString,
    title: Type.String(),
    visible: Type.Boolean(),
    removedFrom: RemovedFrom,
  },
  { title: 'DocumentTypeSummary' },
);

/** A process as it is listed inside other resources: dependencies, a document type's processes. */
export const ProcessSummary = Type.Object(
  {
    identifier: Uuid(),
    qualifiedIdentifier: QualifiedIdentifierString,
    title: Type.String(),
    restricted: Type.Boolean(),
    visible: Type.Boolean(),
    removedFrom: RemovedFrom,
  },
  { title: 'ProcessSummary' },
);

export const Process = Type.Object(
  {
    identifier: Uuid(),
    qualifiedIdentifier: QualifiedIdentifierString,
    domain: Type.String(),
    title: Type.String(),
    alias: Nullable(Type.String()),
    restricted: Type.Boolean(),
    visible: Type.Boolean(),
    removedFrom: RemovedFrom,
    capabilities: Type.Array(CapabilitySummary),
    documentTypes: Type.Array(DocumentTypeSummary),
    dependencies: Type.Array(ProcessSummary),
    requiredICDs: Type.Array(Type.String()),
  },
  { title: 'Process' },
);
export type Process = Static<typeof Process>;

export const ProcessPage = PageSchema(Process, 'ProcessPage');

export const ProcessFilter = Type.Object({
  ...TextSearch('case-insensitive part of the title, alias or qualified identifier'),
  domain: Type.Optional(Type.Array(Type.String(), { description: 'any of these domains' })),
  documentType: Type.Optional(
    Type.String({ description: 'identifier or qualified identifier of a linked document type' }),
  ),
  dependency: Type.Optional(
    Type.String({ description: 'identifier or qualified identifier of a process depended on' }),
  ),
  requiredIcd: Type.Optional(Type.Array(IcdSchema, { description: 'any of these required ICDs' })),
  restricted: Type.Optional(Type.Boolean()),
  visible: Type.Optional(Type.Boolean()),
});
export type ProcessFilter = Static<typeof ProcessFilter>;

export const ProcessQuery = Type.Object({ ...ProcessFilter.properties, ...PageQuery });
