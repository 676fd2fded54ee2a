import { Ajv, type Options } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Request bodies are validated as sent: a value of the wrong JSON type is a binding failure, never coerced.
 * Query strings, path and headers arrive as text and are coerced (`?size=5`, a single `sort` into an array).
 */
function validator(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, useDefaults: true, ...options });
  ajvFormats.default(ajv);
  ajv.addKeyword('x-constraint');
  ajv.addFormat('https-url', isHttpsUrl);
  return ajv;
}

/** An absolute https URL with a host and without user information (an endpoint address others will call). */
export function isHttpsUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
}

const body = validator({ coerceTypes: false });
const text = validator({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? body : text).compile(schema);
