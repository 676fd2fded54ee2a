import { readFileSync } from 'node:fs';
import { ANONYMOUS, Role } from '../http/auth.js';
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
  responses: Record<string, { content?: Record<string, unknown> }>;
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
    Object.entries(item).map(([method, operation]) => ({ ...operation, method: method.toUpperCase(), path })));
}

function roleTable(operations: Operation[]): string {
  const rows = operations.map((operation) => {
    const roles = (operation['x-roles'] ?? []).map((role) => ABBREVIATIONS[role] ?? role).join(', ');
    return `| ${operation.method} | \`${operation.path}\` | ${operation.summary ?? ''} | ${roles || 'no check'} |`;
  });
  return ['## Operations and roles', '', '| Method | Path | Operation | Roles |', '|---|---|---|---|', ...rows].join('\n');
}

/** A small valid-looking value of a schema: the required properties only, empty sets, first enum value. */
export function sampleOf(schema: JsonObject | undefined, components: Record<string, JsonObject>, depth = 0): unknown {
  if (!schema || depth > 8) return null;
  if (typeof schema.$ref === 'string') return sampleOf(components[schema.$ref.split('/').pop() as string], components, depth + 1);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const choices = (schema.anyOf ?? schema.oneOf) as JsonObject[] | undefined;
  if (choices) return sampleOf(choices[0], components, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'object') {
    const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
    const required = (schema.required as string[] | undefined) ?? Object.keys(properties).slice(0, 1);
    return Object.fromEntries(required.map((name) => [name, sampleOf(properties[name], components, depth + 1)]));
  }
  if (type === 'array') return (schema.minItems as number | undefined) ? [sampleOf(schema.items as JsonObject, components, depth + 1)] : [];
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'boolean') return false;
  if (schema.format === 'uuid') return SAMPLE_UUID;
  if (schema.format === 'date') return '2026-01-31';
  if (schema.format === 'email') return 'contact@example.com';
  if (typeof schema.pattern === 'string' && schema.pattern.includes('::')) return 'example-scheme::example-value';
  return 'example'.padEnd(Number(schema.minLength ?? 0), '-');
}

function curlOf(operation: Operation, components: Record<string, JsonObject>): string {
  const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'));
  const accept = Object.keys(success?.[1].content ?? {}).find((type) => type !== JSON_MEDIA_TYPE) ?? JSON_MEDIA_TYPE;
  const anonymous = operation['x-roles']?.includes(ANONYMOUS) ?? true;
  const path = operation.path.replace(/\{[^}]+\}/g, (name) => (name === '{identifier}' ? SAMPLE_UUID : 'iso6523-actorid-upis%3A%3A0192%3A987654321'));
  const paged = operation.parameters?.some((parameter) => parameter.name === 'size');
  const lines = [`curl -i ${anonymous ? '' : '-u "$USERNAME:$PASSWORD" '}-X ${operation.method} '${BASE_URL}${path}${paged ? '?page=0&size=5' : ''}'`, `  -H 'Accept: ${accept}'`];
  const body = operation.requestBody?.content;
  if (body) {
    const [type, media] = Object.entries(body).find(([name]) => name !== JSON_MEDIA_TYPE) ?? Object.entries(body)[0] ?? [];
    lines.push(`  -H 'Content-Type: ${type}'`, `  --data '${JSON.stringify(sampleOf(media?.schema, components), null, 2)}'`);
  }
  const answer = success ? `answers ${success[0]}${success[1].content ? ` with \`${accept}\`` : ', no body'}` : '';
  return [`**${operation.summary ?? `${operation.method} ${operation.path}`}** ${answer}:`, '', '```sh', lines.join(' \\\n'), '```'].join('\n');
}

/** Per resource: reading it (its find operation, else its first read) and, where it has one, adding to it. */
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
    return [`### ${tag}`, '', ...examples.map((operation) => curlOf(operation, components))].join('\n\n');
  });
  return ['## Worked examples', '', 'Replace `$USERNAME:$PASSWORD` with your credentials and the host with the service you use.', '', ...sections].join('\n');
}

/** The Markdown introduction: the fixed text, then the role table and examples of the operations described. */
export function introductionOf(description: Description): string {
  const operations = operationsOf(description);
  const components = description.components?.schemas ?? {};
  return [INTRODUCTION.trim(), roleTable(operations), workedExamples(operations, components)].join('\n\n');
}
