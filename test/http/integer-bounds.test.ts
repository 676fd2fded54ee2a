import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp, type TestUser } from '../helpers/app.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';

/**
 * Every integer parameter of every operation of the OpenAPI description (query, path, and body properties at any
 * depth) has a minimum and a maximum, and a value outside them answers 400 naming the parameter: never a 500 from a
 * number the database cannot take (`GET /changes?after=9223372036854775807` was one).
 */

const t = useTestApp();

type Schema = {
  type?: string | string[];
  minimum?: number;
  maximum?: number;
  $ref?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
interface Parameter {
  name: string;
  in: string;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  'x-method-not-allowed'?: boolean;
  tags?: string[];
}
interface Description {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** An integer the operation takes: where (query, path, or the body's field path), its bounds, and the operation. */
interface IntegerParameter {
  method: string;
  path: string;
  where: 'query' | 'path' | 'body';
  name: string;
  schema: Schema;
}

let description: Description;
let integers: IntegerParameter[];

const isInteger = (schema: Schema) => [schema.type].flat().includes('integer');

/** Every integer property of a body schema, by field path as the validation errors name it (`processes[0].id`). */
function integerFields(schema: Schema, path: string, seen: Set<string>): Array<{ name: string; schema: Schema }> {
  if (schema.$ref) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    if (seen.has(name)) return [];
    return integerFields(description.components.schemas[name] as Schema, path, new Set([...seen, name]));
  }
  if (isInteger(schema)) return [{ name: path, schema }];
  const nested = [
    ...Object.entries(schema.properties ?? {}).map(([key, child]) =>
      integerFields(child, path === '' ? key : `${path}.${key}`, seen),
    ),
    ...(schema.items ? [integerFields(schema.items, `${path}[0]`, seen)] : []),
    ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].map((branch) =>
      integerFields(branch, path, seen),
    ),
  ];
  return nested.flat();
}

beforeAll(async () => {
  description = (await t.app.inject({ url: '/v3/api-docs' })).json<Description>();
  integers = Object.entries(description.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => !operation.tags?.includes('methods not allowed'))
      .flatMap(([method, operation]) => [
        ...(operation.parameters ?? [])
          .filter((parameter) => isInteger(parameter.schema))
          .map((parameter) => ({
            method,
            path,
            where: parameter.in as 'query' | 'path',
            name: parameter.name,
            schema: parameter.schema,
          })),
        ...Object.values(operation.requestBody?.content ?? {})
          .slice(0, 1)
          .flatMap(({ schema }) => integerFields(schema, '', new Set()))
          .map((field) => ({ method, path, where: 'body' as const, ...field })),
      ]),
  );
});

/** `{"processes":[{"id":5}]}` for `processes[0].id`. */
function bodyWith(field: string, value: number): unknown {
  const steps = field.split(/\.|(?=\[)/).map((step) => (step.startsWith('[') ? Number(step.slice(1, -1)) : step));
  const root = (typeof steps[0] === 'number' ? [] : {}) as Record<string | number, unknown>;
  let node = root;
  steps.forEach((step, index) => {
    const next = steps[index + 1];
    node[step] = index === steps.length - 1 ? value : typeof next === 'number' ? [] : {};
    node = node[step] as Record<string | number, unknown>;
  });
  return root;
}

/** The request with `value` for the parameter, by the first user whose role the operation admits. */
async function callWith(parameter: IntegerParameter, value: string): Promise<LightMyRequestResponse> {
  const url = parameter.path.replace(/\{(\w+)\}/g, (_match, name: string) =>
    parameter.where === 'path' && name === parameter.name ? value : randomUUID(),
  );
  const query = parameter.where === 'query' ? `?${parameter.name}=${encodeURIComponent(value)}` : '';
  const users: TestUser[] = [t.users.admin, t.users.authority, t.users.serviceProvider, t.users.accessPointProvider];
  let response: LightMyRequestResponse | undefined;
  for (const user of users) {
    response = await t.app.inject({
      method: parameter.method.toUpperCase() as 'GET',
      url: `${url}${query}`,
      headers: { authorization: user.authorization },
      ...(parameter.where === 'body'
        ? { payload: bodyWith(parameter.name, Number(value)) as Record<string, unknown> }
        : {}),
    });
    if (response.statusCode !== 403) return response;
  }
  return response as LightMyRequestResponse;
}

describe('integer parameters', () => {
  it('are found in queries and bodies (the walk of the description sees them)', () => {
    const named = integers.map(
      (parameter) => `${parameter.method.toUpperCase()} ${parameter.path} ${parameter.where} ${parameter.name}`,
    );
    expect(named).toContain('GET /rest/api/changes query limit');
    expect(named).toContain('GET /rest/api/participants query size');
    expect(named).toContain('POST /rest/api/participants body processes[0].id');
  });

  it('each have a minimum and a maximum in the description', () => {
    const unbounded = integers
      .filter((parameter) => parameter.schema.minimum === undefined || parameter.schema.maximum === undefined)
      .map((parameter) => `${parameter.method} ${parameter.path} ${parameter.where} ${parameter.name}`);
    expect(unbounded).toEqual([]);
  });

  it('answer 400 naming the parameter just outside either bound, and for numbers no database takes', async () => {
    const wrong: string[] = [];
    for (const parameter of integers) {
      const { minimum = 0, maximum = 0 } = parameter.schema;
      const outside: Array<[string, string]> = [
        [String(maximum + 1), 'Max'],
        [String(minimum - 1), 'Min'],
      ];
      if (parameter.where !== 'body') outside.push(['9223372036854775807', 'Max'], ['1e20', 'Max']);
      for (const [value, code] of outside) {
        const response = await callWith(parameter, value);
        if (response.statusCode !== 400) {
          wrong.push(
            `${parameter.method} ${parameter.path} ${parameter.name}=${value}: ${response.statusCode} ${response.body.slice(0, 200)}`,
          );
          continue;
        }
        const body = expectErrorBody(response, 400);
        const objectName = (body.errors as Array<{ objectName: string }>)[0]?.objectName as string;
        expectFieldError(body, objectName, parameter.name, code);
      }
    }
    expect(wrong).toEqual([]);
  });
});
