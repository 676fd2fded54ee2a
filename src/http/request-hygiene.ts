import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { fieldError, ValidationError, type FieldError } from './errors.js';

/**
 * Before schema validation: a JSON `null` counts as an absent property (so a required one reports `NotNull`),
 * and strings holding NUL characters, which PostgreSQL cannot store, are refused field by field.
 */
async function requestHygiene(fastify: FastifyInstance) {
  fastify.addHook('preValidation', async (request) => {
    const violations: FieldError[] = [];
    // Named like the schema's own errors: the body by its object name, then queryParameters, pathVariables.
    const collect = (objectName: string): Collect => (field, value) =>
      violations.push(fieldError({
        objectName, field, code: 'NoNulCharacter', rejectedValue: value, defaultMessage: 'must not contain NUL characters',
      }));

    request.body = withoutNulls(request.body, '', collect(request.routeOptions.config.objectName ?? 'request'));
    findNul(request.query, '', collect('queryParameters'));
    findNul(request.params, '', collect('pathVariables'));
    const [first] = violations;
    if (first) throw new ValidationError(first.objectName, violations);
  });
}

type Collect = (field: string, value: unknown) => void;

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

function withoutNulls(value: unknown, path: string, collect: Collect): unknown {
  if (Array.isArray(value)) return value.map((item, index) => withoutNulls(item, childPath(path, index), collect));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, child]) => child !== null);
    return Object.fromEntries(entries.map(([key, child]) => [key, withoutNulls(child, childPath(path, key), collect)]));
  }
  if (typeof value === 'string' && value.includes('\u0000')) collect(path, value);
  return value;
}

function findNul(value: unknown, path: string, collect: Collect): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) collect(path, value);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) findNul(child, childPath(path, key), collect);
  }
}

export default fp(requestHygiene, { name: 'request-hygiene' });
