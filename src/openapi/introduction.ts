import { readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { ANONYMOUS, Role } from '../http/auth.js';
import { isRecord } from '../core/json.js';
import { JSON_MEDIA_TYPE } from '../http/media-types.js';

type JsonObject = Record<string, unknown>;

interface Operation {
  method: string;
  path: string;
  operationId?: string;
  summary?: string;
  tags?: string[];
  parameters?: Array<{ name: string; in: string; schema?: JsonObject }>;
  requestBody?: { content: Record<string, { schema: JsonObject }> };
  responses: Record<string, { content?: Record<string, { schema?: JsonObject }> }>;
  'x-roles'?: string[];
}

export interface Description {
  paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>>;
  components?: { schemas?: Record<string, JsonObject> };
}

const INTRODUCTION = readFileSync(new URL('./docs/introduction.md', import.meta.url), 'utf8');
const ABBREVIATIONS: Record<string, string> = {
  [Role.serviceProvider]: 'SP',
  [Role.accessPointProvider]: 'APP',
  [Role.admin]: 'ADM',
  [Role.registryAuthority]: 'AUT',
  [ANONYMOUS]: 'ANO',
};
const BASE_URL = 'http://localhost:8080';
const SAMPLE_UUID = '3fa85f64-5717-4562-b3fc-2c963f66afa6';

function operationsOf(description: Description): Operation[] {
  return Object.entries(description.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ ...operation, method: method.toUpperCase(), path })),
  );
}

function roleTable(operations: Operation[]): string {
  const rows = operations.map((operation) => {
    const roles = (operation['x-roles'] ?? []).map((role) => ABBREVIATIONS[role] ?? role).join(', ');
    return `| ${operation.method} | \`${operation.path}\` | ${operation.summary ?? ''} | ${roles || 'no check'} |`;
  });
  return ['## Operations and roles', '', '| Method | Path | Operation | Roles |', '|---|---|---|---|', ...rows].join(
    '\n',
  );
}

/**
 * A valid-looking value of a schema. A request sample has the required properties only and empty sets; a
 * response sample (`full`) has every property and one item per array, down to a few levels.
 */
function sampleOf(
  schema: JsonObject | undefined,
  components: Record<string, JsonObject>,
  full = false,
  depth = 0,
): unknown {
  if (!schema || depth > 8) return null;
  const sample = (child: unknown) => sampleOf(isRecord(child) ? child : undefined, components, full, depth + 1);
  if (typeof schema.$ref === 'string') return sample(components[schema.$ref.slice(schema.$ref.lastIndexOf('/') + 1)]);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const choices = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(choices)) return sample(choices.find((choice) => !isRecord(choice) || choice.type !== 'null'));
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'object') {
    const properties = isRecord(schema.properties) ? schema.properties : {};
    const required: string[] = full
      ? Object.keys(properties)
      : Array.isArray(schema.required)
        ? schema.required
        : Object.keys(properties).slice(0, 1);
    return Object.fromEntries(required.map((name) => [name, sample(properties[name])]));
  }
  if (type === 'array') return (full && depth < 4) || schema.minItems ? [sample(schema.items)] : [];
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'boolean') return false;
  if (schema.format === 'uuid') return SAMPLE_UUID;
  if (schema.format === 'date') return '2026-01-31';
  if (schema.format === 'email') return 'contact@example.com';
  if (typeof schema.pattern === 'string' && schema.pattern.includes('::')) return 'example-scheme::example-value';
  return 'example'.padEnd(Number(schema.minLength ?? 0), '-');
}

/** The curl command of an operation, and with `withResponse` what it answers. */
function curlOf(operation: Operation, components: Record<string, JsonObject>, withResponse: boolean): string {
  const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'));
  const accept = Object.keys(success?.[1].content ?? {}).find((type) => type !== JSON_MEDIA_TYPE) ?? JSON_MEDIA_TYPE;
  const anonymous = operation['x-roles']?.includes(ANONYMOUS) ?? true;
  const path = operation.path.replace(/\{[^}]+\}/g, (name) =>
    name === '{identifier}' ? SAMPLE_UUID : 'iso6523-actorid-upis%3A%3A0192%3A987654325',
  );
  const paged = operation.parameters?.some((parameter) => parameter.name === 'size');
  const lines = [
    `curl -i ${anonymous ? '' : '-u "$USERNAME:$PASSWORD" '}-X ${operation.method} '${BASE_URL}${path}${paged ? '?page=0&size=5' : ''}'`,
    `  -H 'Accept: ${accept}'`,
  ];
  const body = operation.requestBody?.content;
  if (body) {
    const [type, media] =
      Object.entries(body).find(([name]) => name !== JSON_MEDIA_TYPE) ?? Object.entries(body)[0] ?? [];
    lines.push(
      `  -H 'Content-Type: ${type}'`,
      `  --data '${JSON.stringify(sampleOf(media?.schema, components), null, 2)}'`,
    );
  }
  const answer = success ? `answers ${success[0]}${success[1].content ? ` with \`${accept}\`` : ', no body'}` : '';
  const request = [
    `**${operation.summary ?? `${operation.method} ${operation.path}`}** ${answer}:`,
    '```sh',
    lines.join(' \\\n'),
    '```',
  ];
  const schema = success?.[1].content?.[accept]?.schema;
  if (!withResponse || !success || !schema) return request.join('\n');
  const response = [
    `HTTP/1.1 ${success[0]} ${STATUS_CODES[success[0]] ?? ''}`,
    `Content-Type: ${accept};charset=UTF-8`,
    '',
    JSON.stringify(sampleOf(schema, components, true), null, 2),
  ];
  return [...request, '', 'The response (values made up):', '```http', ...response, '```'].join('\n');
}

/** Per resource: reading it (its find operation, else its first read) and, where it has one, adding to it; the last with its response. */
function workedExamples(operations: Operation[], components: Record<string, JsonObject>): string {
  const byTag = new Map<string, Operation[]>();
  for (const operation of operations) {
    const tag = operation.tags?.[0];
    if (tag) byTag.set(tag, [...(byTag.get(tag) ?? []), operation]);
  }
  const sections = [...byTag].map(([tag, list]) => {
    const reads = list.filter((operation) => operation.method === 'GET');
    const read = reads.find((operation) => !operation.path.includes('{')) ?? reads[0];
    const add = list.find((operation) => operation.method === 'POST');
    const examples = [read, add].filter((operation): operation is Operation => operation !== undefined);
    return [
      `### ${tag}`,
      ...examples.map((operation, index) => curlOf(operation, components, index === examples.length - 1)),
    ].join('\n\n');
  });
  return [
    '## Worked examples',
    'Replace `$USERNAME:$PASSWORD` with your credentials and the host with the service you use.',
    ...sections,
  ].join('\n\n');
}

/** The Markdown introduction: the fixed text, then the role table and examples of the operations described. */
export function introductionOf(description: Description): string {
  const operations = operationsOf(description);
  const components = description.components?.schemas ?? {};
  return [INTRODUCTION.trim(), roleTable(operations), workedExamples(operations, components)].join('\n\n');
}
