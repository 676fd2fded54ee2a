import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
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
function isHttpsUrl(value: string): boolean {
  const url = URL.parse(value);
  return url !== null && url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
}

const body = validator({ coerceTypes: false });
const text = validator({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  httpPart === 'body' ? body.compile(schema) : finiteNumbersOnly(text.compile(schema), schema as SchemaWithProperties);

type SchemaWithProperties = { properties?: Record<string, unknown> };

/**
 * ajv coerces text such as `1e400` to Infinity and lets it pass `integer` and `maximum`, so a huge page would
 * reach SQL as "Infinity". A number that is not finite is a type mismatch like any other non-number.
 */
function finiteNumbersOnly(validate: ValidateFunction, schema: SchemaWithProperties) {
  const checked = (data: unknown): boolean => {
    const valid = validate(data);
    const infinite = valid && typeof data === 'object' && data !== null ? nonFinite(data as Record<string, unknown>, schema) : [];
    checked.errors = infinite.length > 0 ? infinite : validate.errors;
    return valid && infinite.length === 0;
  };
  checked.errors = null as ValidateFunction['errors'];
  return checked;
}

function nonFinite(data: Record<string, unknown>, schema: SchemaWithProperties): ErrorObject[] {
  return Object.entries(data).flatMap(([key, value]) =>
    (Array.isArray(value) ? value.map((item, index) => [`/${key}/${index}`, item] as const) : [[`/${key}`, value] as const])
      .filter(([, item]) => typeof item === 'number' && !Number.isFinite(item))
      .map(([instancePath, item]) => ({
        keyword: 'type', instancePath, schemaPath: `#/properties/${key}/type`, params: { type: 'integer' },
        message: 'must be integer', data: item, parentSchema: schema.properties?.[key] as object | undefined,
      })));
}
