import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifySchemaCompiler } from 'fastify';
import { isRecord } from '../core/json.js';
import { isPrintableAscii, isXmlText } from '../core/xml-text.js';

/**
 * Request bodies are validated as sent: a value of the wrong JSON type is a binding failure, never coerced.
 * Query strings, path and headers arrive as text and are coerced (`?size=5`, a single `sort` into an array).
 */
function validator(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, useDefaults: true, ...options });
  ajvFormats.default(ajv);
  ajv.addKeyword('x-constraint');
  ajv.addFormat('https-url', isHttpsUrl);
  // Text that reaches XML, and identifiers as Peppol's clients take them (core/xml-text.ts, docs/design/http.md).
  ajv.addFormat('xml-text', isXmlText);
  ajv.addFormat('printable-ascii', isPrintableAscii);
  ajv.addFormat('date', isStorableDate);
  ajv.addFormat('date-time', isStorableInstant);
  return ajv;
}

/**
 * Dates and instants in the years 0001 to 9999 (UTC) only: PostgreSQL refuses year 0, and a later instant would be
 * written with a fifth digit of year that the `date-time` format does not allow.
 */
const inStorableYears = (year: number) => year >= 1 && year <= 9999;

/** ajv-formats' own check of a format, which these narrow (its table types some formats as bare patterns). */
const standard = (format: 'date' | 'date-time') =>
  (fullFormats[format] as { validate: (value: string) => boolean }).validate;

function isStorableDate(value: string): boolean {
  return standard('date')(value) && inStorableYears(Number(value.slice(0, 4)));
}

function isStorableInstant(value: string): boolean {
  if (!standard('date-time')(value)) return false;
  // JavaScript's dates know no leap second: it counts as the second before it.
  return inStorableYears(new Date(value.replace(/(\d\d:\d\d):60/, '$1:59')).getUTCFullYear());
}

/**
 * An absolute https URL with a host and without user information (an endpoint address others will call), written in
 * printable US-ASCII: the URL parser would drop a tab or line feed and encode a control character, so the text stored
 * and published would not be the address it checked.
 */
function isHttpsUrl(value: string): boolean {
  if (!isPrintableAscii(value)) return false;
  const url = URL.parse(value);
  return url !== null && url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
}

// Made at the first schema compiled, not at import: a command line that validates nothing does not wait for them.
let body: Ajv | undefined;
let text: Ajv | undefined;

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  httpPart === 'body'
    ? (body ??= validator({ coerceTypes: false })).compile(schema)
    : finiteNumbersOnly((text ??= validator({ coerceTypes: 'array' })).compile(schema), schema as SchemaWithProperties);

type SchemaWithProperties = { properties?: Record<string, unknown> };

/**
 * ajv coerces text such as `1e400` to Infinity and lets it pass `integer` and `maximum`, so a huge page would
 * reach SQL as "Infinity". A number that is not finite is a type mismatch like any other non-number.
 */
function finiteNumbersOnly(validate: ValidateFunction, schema: SchemaWithProperties) {
  const checked = (data: unknown): boolean => {
    const valid = validate(data);
    const infinite = valid && isRecord(data) ? nonFinite(data, schema) : [];
    checked.errors = infinite.length > 0 ? infinite : validate.errors;
    return valid && infinite.length === 0;
  };
  checked.errors = null as ValidateFunction['errors'];
  return checked;
}

function nonFinite(data: Record<string, unknown>, schema: SchemaWithProperties): ErrorObject[] {
  return Object.entries(data).flatMap(([key, value]) =>
    (Array.isArray(value)
      ? value.map((item, index) => [`/${key}/${index}`, item] as const)
      : [[`/${key}`, value] as const]
    )
      .filter(([, item]) => typeof item === 'number' && !Number.isFinite(item))
      .map(([instancePath, item]) => ({
        keyword: 'type',
        instancePath,
        schemaPath: `#/properties/${key}/type`,
        params: { type: 'integer' },
        message: 'must be integer',
        data: item,
        parentSchema: schema.properties?.[key] as object | undefined,
      })),
  );
}
