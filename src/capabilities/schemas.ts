import { Type, type Static } from 'typebox';
import { PageQuery, PageSchema } from '../core/paging.js';
import { RequiredName, Uuid } from '../core/schemas.js';

export const CapabilityForm = Type.Object({ title: RequiredName() }, { title: 'CapabilityForm' });
export type CapabilityForm = Static<typeof CapabilityForm>;

export const Capability = Type.Object({ identifier: Uuid(), title: Type.String() }, { title: 'Capability' });
export type Capability = Static<typeof Capability>;

export const CapabilityPage = PageSchema(Capability, 'CapabilityPage');
export const CapabilityQuery = Type.Object(PageQuery);
