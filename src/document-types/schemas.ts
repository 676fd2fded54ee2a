import { Type, type Static } from 'typebox';
import { PageQuery, PageSchema } from '../core/paging.js';
import {
  ProcessIdentifiable,
  QualifiedIdentifierInput,
  QualifiedIdentifierString,
  RequiredName,
  Uuid,
} from '../core/schemas.js';
import { ProcessSummary, RemovedFrom, RemovedFromInput } from '../processes/schemas.js';

export const DocumentTypeForm = Type.Object(
  {
    title: RequiredName(),
    qualifiedIdentifier: QualifiedIdentifierInput,
    visible: Type.Boolean({ description: 'true if visible in the network metadata lookup' }),
    removedFrom: RemovedFromInput,
    processes: Type.Array(ProcessIdentifiable, {
      uniqueItems: true,
      description: 'the processes that carry this document type',
    }),
  },
  { title: 'DocumentTypeForm' },
);
export type DocumentTypeForm = Static<typeof DocumentTypeForm>;

export const DocumentType = Type.Object(
  {
    identifier: Uuid(),
    qualifiedIdentifier: QualifiedIdentifierString,
    title: Type.String(),
    visible: Type.Boolean(),
    removedFrom: RemovedFrom,
    processes: Type.Array(ProcessSummary),
  },
  { title: 'DocumentType' },
);
export type DocumentType = Static<typeof DocumentType>;

export const DocumentTypePage = PageSchema(DocumentType, 'DocumentTypePage');

export const DocumentTypeQuery = Type.Object(PageQuery);
