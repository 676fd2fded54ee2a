import { Type, type Static } from 'typebox';
import { PageQuery, PageSchema } from '../core/paging.js';
import {
  CapabilityIdentifiable, DocumentTypeIdentifiable, FreeText, IcdSchema, Nullable, ProcessIdentifiable,
  OptionalName, QualifiedIdentifierInput, QualifiedIdentifierString, RequiredName, TextBound, TextSearch, Uuid,
} from '../core/schemas.js';

export const ProcessForm = Type.Object(
  {
    domain: FreeText({ maxLength: TextBound.name, description: 'the domain the process belongs to' }),
    title: RequiredName(),
    alias: OptionalName(),
    qualifiedIdentifier: QualifiedIdentifierInput,
    restricted: Type.Boolean({ description: 'true if the process is deprecated' }),
    visible: Type.Boolean({ description: 'true if visible in the network metadata lookup' }),
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
  { identifier: Uuid(), qualifiedIdentifier: QualifiedIdentifierString, title: Type.String(), visible: Type.Boolean() },
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
  documentType: Type.Optional(Type.String({ description: 'identifier or qualified identifier of a linked document type' })),
  dependency: Type.Optional(Type.String({ description: 'identifier or qualified identifier of a process depended on' })),
  requiredIcd: Type.Optional(Type.Array(IcdSchema, { description: 'any of these required ICDs' })),
  restricted: Type.Optional(Type.Boolean()),
  visible: Type.Optional(Type.Boolean()),
});
export type ProcessFilter = Static<typeof ProcessFilter>;

export const ProcessQuery = Type.Object({ ...ProcessFilter.properties, ...PageQuery });
