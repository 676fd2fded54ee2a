import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { fieldError, ValidationError, type FieldError, type FieldErrorInput } from '../core/errors.js';
import { characterOutsidePrintableAscii, characterXmlCannotCarry } from '../core/xml-text.js';

type EntryBase = Omit<FieldErrorInput, 'code' | 'defaultMessage'>;

/** The parts of a JSON schema an entry is built from: its constraints, type and flags. */
interface SchemaLike {
  type?: string | string[];
  title?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  uniqueItems?: boolean;
  properties?: Record<string, SchemaLike>;
  /** The code reported when the value is missing, null or too short (`NotEmpty` rather than `NotNull`/`Size`). */
  'x-constraint'?: string;
  /** A secret such as a password: its rejected value is never echoed. */
  writeOnly?: boolean;
}

interface ValidatorError extends FastifySchemaValidationError {
  parentSchema?: SchemaLike;
  data?: unknown;
}

const INT_MAX = 2147483647;

/**
 * Turns the schema validator's errors (ajv, run with `allErrors` and `verbose`) into the entries of the
 * specification's 400 body: every violation at once, named by field path, with Bean-Validation-like codes.
 */
export function validationErrorOf(objectName: string, errors: FastifySchemaValidationError[]): ValidationError {
  const failures = errors as ValidatorError[];
  const unions = failures.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  const inside = (union: ValidatorError, error: ValidatorError) =>
    union !== error && error.schemaPath.startsWith(`${union.schemaPath}/`);
  // A value of the right shape with characters a branch refuses (`a::b` with a control character) is told that, not
  // that its shape is wrong: such a failure stands for its union.
  const characters = failures.filter(isCharacterFailure);
  const reported = (error: ValidatorError) =>
    unions.some((union) => inside(union, error))
      ? isCharacterFailure(error)
      : !characters.some((failure) => inside(error, failure));
  const entries = failures.filter(reported).map((error) => entryOf(objectName, error));
  return new ValidationError(objectName, dedupe(entries));
}

function entryOf(objectName: string, error: ValidatorError): FieldError {
  const schema = error.parentSchema ?? {};
  const field = fieldPath(error.instancePath);
  const base: EntryBase = {
    objectName,
    field,
    rejectedValue: schema.writeOnly ? null : error.data,
    typeName: typeNameOf(schema),
  };
  const flagged = schema['x-constraint'];
  switch (error.keyword) {
    case 'required': {
      const missing = String(error.params.missingProperty);
      const property = schema.properties?.[missing] ?? {};
      return fieldError({
        ...base,
        field: join(field, missing),
        rejectedValue: null,
        typeName: typeNameOf(property),
        ...missingValue(property['x-constraint']),
      });
    }
    case 'type':
      if (error.data === null) return fieldError({ ...base, ...missingValue(flagged) });
      return fieldError({
        ...base,
        code: 'typeMismatch',
        bindingFailure: true,
        defaultMessage: `must be ${describeType(schema.type)}`,
      });
    case 'minLength':
    case 'minItems':
      if (flagged === 'NotEmpty') return fieldError({ ...base, code: 'NotEmpty', defaultMessage: 'must not be empty' });
      return sizeError(base, schema);
    case 'maxLength':
    case 'maxItems':
      return sizeError(base, schema);
    case 'pattern':
      if (flagged === 'Icd')
        return fieldError({ ...base, code: 'Icd', defaultMessage: 'must be an ICD: four digits, such as 0192' });
      return fieldError({
        ...base,
        code: 'Pattern',
        defaultMessage: `must match "${schema.pattern}"`,
        constraintArguments: [schema.pattern],
      });
    case 'enum':
      return fieldError({ ...base, code: flagged ?? 'OneOf', defaultMessage: 'must be one of the allowed values' });
    case 'uniqueItems':
      return fieldError({ ...base, code: 'UniqueElements', defaultMessage: 'must only contain unique elements' });
    case 'minimum':
      return boundError(base, 'Min', 'greater', error.params.limit);
    case 'maximum':
      return boundError(base, 'Max', 'less', error.params.limit);
    case 'format':
      return formatError(base, String(error.params.format), error.data);
    case 'anyOf':
    case 'oneOf':
      return fieldError({
        ...base,
        code: 'typeMismatch',
        bindingFailure: true,
        defaultMessage:
          schema.title === 'QualifiedIdentifier'
            ? 'must be a string <scheme>::<value> or an object with scheme and value'
            : 'has an unexpected shape',
      });
    default:
      return fieldError({ ...base, code: error.keyword, defaultMessage: error.message ?? 'is invalid' });
  }
}

function missingValue(flagged: string | undefined) {
  return flagged === 'NotEmpty'
    ? { code: 'NotEmpty', defaultMessage: 'must not be empty' }
    : { code: 'NotNull', defaultMessage: 'must not be null' };
}

function boundError(base: EntryBase, code: 'Min' | 'Max', than: 'greater' | 'less', limit: unknown) {
  return fieldError({
    ...base,
    code,
    defaultMessage: `must be ${than} than or equal to ${String(limit)}`,
    constraintArguments: [limit],
  });
}

function sizeError(base: EntryBase, schema: SchemaLike) {
  const min = schema.minLength ?? schema.minItems ?? 0;
  const max = schema.maxLength ?? schema.maxItems ?? INT_MAX;
  return fieldError({
    ...base,
    code: 'Size',
    defaultMessage: `size must be between ${min} and ${max}`,
    constraintArguments: [max, min],
  });
}

/** The formats that refuse characters: text that reaches XML, and identifiers (see core/xml-text.ts). */
const CHARACTER_FORMATS: Readonly<
  Record<string, { code: string; problem: (text: string) => string | undefined; rule: string }>
> = {
  'xml-text': {
    code: 'XmlCharacters',
    problem: characterXmlCannotCarry,
    rule: 'XML 1.0 cannot carry it (control characters other than tab, line feed and carriage return, U+FFFE, U+FFFF, unpaired surrogates)',
  },
  'printable-ascii': {
    code: 'PrintableAscii',
    problem: characterOutsidePrintableAscii,
    rule: 'only printable US-ASCII is allowed here (U+0021 to U+007E: no blank, no control character, no other letter)',
  },
};

const isCharacterFailure = (error: ValidatorError) =>
  error.keyword === 'format' && Object.hasOwn(CHARACTER_FORMATS, String(error.params.format));

function formatError(base: EntryBase, format: string, data: unknown) {
  if (format === 'email') {
    return fieldError({ ...base, code: 'Email', defaultMessage: 'must be a well-formed email address' });
  }
  if (format === 'https-url') {
    const found = typeof data === 'string' ? characterOutsidePrintableAscii(data) : undefined;
    const defaultMessage = found
      ? `must not contain ${found}: a URL is printable US-ASCII (percent-encode anything else)`
      : 'must be an absolute https URL';
    return fieldError({ ...base, code: 'URL', defaultMessage });
  }
  const characters = CHARACTER_FORMATS[format];
  if (characters) {
    const found = typeof data === 'string' ? characters.problem(data) : undefined;
    return fieldError({
      ...base,
      code: characters.code,
      defaultMessage: `must not contain ${found ?? 'this character'}: ${characters.rule}`,
    });
  }
  return fieldError({
    ...base,
    code: 'typeMismatch',
    bindingFailure: true,
    defaultMessage: `must be a valid ${format}`,
  });
}

/** `/processes/0/identifier` becomes `processes[0].identifier`. */
function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : join(path, segment)), '');
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function typeNameOf(schema: SchemaLike): string {
  if (schema.title) return schema.title;
  switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
    case 'boolean':
      return 'Boolean';
    case 'integer':
      return 'Integer';
    case 'number':
      return 'BigDecimal';
    case 'array':
      return schema.uniqueItems ? 'Set' : 'List';
    case 'object':
      return 'Object';
    default:
      return 'String';
  }
}

function describeType(type: SchemaLike['type']): string {
  const name = Array.isArray(type) ? type[0] : type;
  if (name === 'object') return 'an object';
  if (name === 'array') return 'an array';
  if (name === 'integer') return 'an integer';
  return `a ${name ?? 'value'}`;
}

/** The same violation can be reported twice by unions of schemas; each is listed once. */
function dedupe(entries: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return entries.filter((entry) => {
    const key = `${entry.field}\u0000${entry.code}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
