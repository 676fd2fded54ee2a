import type { components } from './schema.js';

export type Schemas = components['schemas'];
export type ErrorBody = Schemas['ErrorBody'];
export type Role = Schemas['Role'];
