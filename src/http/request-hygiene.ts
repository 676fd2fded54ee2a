import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { synchronousHook } from './synchronous-hook.js';
import { fieldError, ValidationError, type FieldError } from '../core/errors.js';

/**
 * Before schema validation: a JSON `null` counts as an absent property (so a required one reports `NotNull`),
 * and strings holding NUL characters, which PostgreSQL cannot store, are refused field by field.
 */
async function requestHygiene(fastify: FastifyInstance) {
  fastify.addHook(
    'preValidation',
    synchronousHook((request) => {
      const violations: FieldError[] = [];
      // Named like the schema's own errors: the body by its object name, then queryParameters, pathVariables.
      // The rejected value is not echoed: it may be a password.
      const collect =
        (objectName: string): Collect =>
        (field, violation = NUL_CHARACTER) =>
          violations.push(fieldError({ objectName, field, rejectedValue: null, ...violation }));

      const { objectName, keepsNull } = request.routeOptions.config;
      request.body = withoutNulls(
        request.body,
        '',
        collect(objectName ?? 'request'),
        0,
        keepsNull ? new Set(keepsNull) : NO_KEYS,
      );
      findNul(request.query, '', collect('queryParameters'));
      findNul(request.params, '', collect('pathVariables'));
      const [first] = violations;
      if (first) throw new ValidationError(first.objectName, violations);
    }),
  );
}

type Violation = { code: string; defaultMessage: string };
type Collect = (field: string, violation?: Violation) => void;

const NUL_CHARACTER: Violation = { code: 'NoNulCharacter', defaultMessage: 'must not contain NUL characters' };

/** Deeper request bodies are refused: no form nests more than a few levels, and recursion must stay bounded. */
const MAX_NESTING = 32;

const TOO_DEEP: Violation = {
  code: 'MaxNesting',
  defaultMessage: `must not be nested more than ${MAX_NESTING} levels deep`,
};

function tooDeep(path: string, collect: Collect): undefined {
  collect(path, TOO_DEEP);
  return undefined;
}

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

const NO_KEYS: ReadonlySet<string> = new Set();

/** `keepsNull`: the body's own properties whose null the route reads as a value (a removal date cleared). */
function withoutNulls(
  value: unknown,
  path: string,
  collect: Collect,
  depth = 0,
  keepsNull: ReadonlySet<string> = NO_KEYS,
): unknown {
  if (typeof value === 'object' && value !== null && depth >= MAX_NESTING) return tooDeep(path, collect);
  if (Array.isArray(value))
    return value.map((item, index) => withoutNulls(item, childPath(path, index), collect, depth + 1));
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(
      ([key, child]) => child !== null || (depth === 0 && keepsNull.has(key)),
    );
    return Object.fromEntries(
      entries.map(([key, child]) => [key, withoutNulls(child, childPath(path, key), collect, depth + 1)]),
    );
  }
  if (typeof value === 'string' && value.includes('\u0000')) collect(path);
  return value;
}

function findNul(value: unknown, path: string, collect: Collect, depth = 0): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) collect(path);
  } else if (typeof value === 'object' && value !== null) {
    if (depth >= MAX_NESTING) return void tooDeep(path, collect);
    for (const [key, child] of Object.entries(value)) findNul(child, childPath(path, key), collect, depth + 1);
  }
}

export default fp(requestHygiene, { name: 'request-hygiene' });
