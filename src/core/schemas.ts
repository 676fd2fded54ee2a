import { Type, type Static, type TSchema } from 'typebox';

/** The ICD values of the specification, exactly: the accepted ones while no Peppol code list is loaded (identifier-schemes/). */
export const ICDS = [
  '9922',
  '9923',
  '9916',
  '9915',
  '9919',
  '9914',
  '9924',
  '9956',
  '9925',
  '9926',
  '9927',
  '9928',
  '9929',
  '9958',
  '9930',
  '9901',
  '9902',
  '0184',
  '0096',
  '9904',
  '9905',
  '0060',
  '0191',
  '9931',
  '9920',
  '9913',
  '9912',
  '0037',
  '0002',
  '0009',
  '9957',
  '9932',
  '0088',
  '9933',
  '9934',
  '9910',
  '9918',
  '9935',
  '9917',
  '0028',
  '9907',
  '0097',
  '9921',
  '0142',
  '0135',
  '9906',
  '9936',
  '9937',
  '9938',
  '9939',
  '9940',
  '9941',
  '9942',
  '9943',
  '0106',
  '9954',
  '9944',
  '0192',
  '9909',
  '9945',
  '9946',
  '9947',
  '9948',
  '0007',
  '9955',
  '0195',
  '9949',
  '9950',
  '9951',
  '9952',
  '9953',
] as const;

/** Any ICD's shape; which ones are accepted is the registry's held list's to say, at request time. */
export const ICD_PATTERN = '^[0-9]{4}$';
const ICD_SHAPE = new RegExp(ICD_PATTERN);

/**
 * Whether `value` has an ICD's shape. Any such ICD can name a registered organization: a participant keeps its ICD
 * after the code list removes it, and stays found; whether a new one may take it is the identifier schemes' to say.
 */
export const hasIcdShape = (value: string): boolean => ICD_SHAPE.test(value);

export const IcdSchema = Type.String({
  pattern: ICD_PATTERN,
  title: 'ICD',
  description:
    'International Code Designator: the authority that issued the organization code, four digits. Which ICDs are ' +
    'accepted is checked against the list the registry holds (400, code `Icd`, for one it does not know): with the Peppol ' +
    'Participant Identifier Schemes code list loaded, its schemes not past their removal date; without one, the ' +
    "specification's list",
  'x-constraint': 'Icd',
});

/**
 * Bounds of free text, in characters: a stored value is answered again in every read, in the audit and in the
 * change feed, so its size is the service's to decide (docs/design/http.md, "Formats").
 */
export const TextBound = { name: 255, email: 254, phoneNumber: 50 } as const;

/**
 * Free text, which may reach XML (the SMP answers, the business card): refused when it holds a character XML 1.0
 * cannot carry (`XmlCharacters`, see core/xml-text.ts).
 */
export const FreeText = (options: Record<string, unknown> = {}) => Type.String({ format: 'xml-text', ...options });

/** Part of an identifier as Peppol's clients take it: printable US-ASCII (`PrintableAscii`, see docs/design/http.md). */
export const IdentifierText = (options: Record<string, unknown> = {}) =>
  Type.String({ format: 'printable-ascii', ...options });

/** A name or title: required, 1 to 255 characters. */
export const RequiredName = (options: Record<string, unknown> = {}) =>
  FreeText({ minLength: 1, maxLength: TextBound.name, 'x-constraint': 'NotEmpty', ...options });

/** Optional text up to 255 characters. */
export const OptionalName = (options: Record<string, unknown> = {}) =>
  Type.Optional(FreeText({ maxLength: TextBound.name, ...options }));

export const Uuid = (options: Record<string, unknown> = {}) => Type.String({ format: 'uuid', ...options });

/** A response property that may be null (`type: [T, "null"]`, which the serializer and OpenAPI 3.1 both read). */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

/** A qualified identifier as it is written in responses: `<scheme>::<value>`. */
export const QualifiedIdentifierString = Type.String({
  title: 'QualifiedIdentifier',
  description: 'An identifier qualified by its scheme, written `<scheme>::<value>`',
  examples: ['iso6523-actorid-upis::0192:987654325'],
});

/** In requests, the string form or an object with scheme and value. */
export const QualifiedIdentifierInput = Type.Union(
  [
    // The scheme must not start with `::`, or the first `::` would leave it empty.
    // Bounded so that an identifier always fits a database index entry (about 2.7 kB).
    IdentifierText({ pattern: '^(?!::).+::.+$', maxLength: 600 }),
    Type.Object({
      scheme: IdentifierText({ minLength: 1, maxLength: 100 }),
      value: IdentifierText({ minLength: 1, maxLength: 500 }),
    }),
  ],
  {
    title: 'QualifiedIdentifier',
    description: '`<scheme>::<value>`, or an object with scheme and value; printable US-ASCII',
  },
);
export type QualifiedIdentifierInput = Static<typeof QualifiedIdentifierInput>;

/** The XML namespace of participant, document type and process identifiers in SMP and SML messages. */
export const PEPPOL_IDENTIFIERS_NS = 'http://busdox.org/transport/identifiers/1.0/';

export interface QualifiedIdentifier {
  scheme: string;
  value: string;
}

/** `<scheme>::<value>`: the one string form of a qualified identifier, which parseQualifiedIdentifier reads back. */
export const formatQualifiedIdentifier = ({ scheme, value }: QualifiedIdentifier): string => `${scheme}::${value}`;

/** Splits a qualified identifier at its first `::`; undefined when it has none. */
export function parseQualifiedIdentifier(input: QualifiedIdentifierInput): QualifiedIdentifier | undefined {
  if (typeof input !== 'string') return input;
  const at = input.indexOf('::');
  if (at <= 0 || at + 2 >= input.length) return undefined;
  return { scheme: input.slice(0, at), value: input.slice(at + 2) };
}

/** The qualified identifier a reference names by its `qualifiedIdentifier`; undefined when it names none or one that does not parse. */
export function qualifiedIdentifierNamedBy(reference: {
  qualifiedIdentifier?: QualifiedIdentifierInput;
}): QualifiedIdentifier | undefined {
  return reference.qualifiedIdentifier === undefined
    ? undefined
    : parseQualifiedIdentifier(reference.qualifiedIdentifier);
}

/** The same, in its one string form (as rows hold it). */
export function qualifiedNameOf(reference: { qualifiedIdentifier?: QualifiedIdentifierInput }): string | undefined {
  const named = qualifiedIdentifierNamedBy(reference);
  return named && formatQualifiedIdentifier(named);
}

const referenceFields = {
  identifier: Type.Optional(Uuid()),
  title: OptionalName({ description: 'ignored' }),
  reference: OptionalName({ description: 'ignored' }),
  id: Type.Optional(
    Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, description: 'ignored' }),
  ),
};

/** Reference objects point at existing resources: by `identifier`, else by `qualifiedIdentifier`. */
export const ProcessIdentifiable = Type.Object(
  { ...referenceFields, qualifiedIdentifier: Type.Optional(QualifiedIdentifierInput) },
  { title: 'ProcessIdentifiable' },
);
export const DocumentTypeIdentifiable = Type.Object(
  { ...referenceFields, qualifiedIdentifier: Type.Optional(QualifiedIdentifierInput) },
  { title: 'DocumentTypeIdentifiable' },
);
export const CapabilityIdentifiable = Type.Object(referenceFields, { title: 'CapabilityIdentifiable' });

/** How one resource names another by its UUID alone (a given `title` is ignored), titled `title` in the description. */
export const IdentifiableByUuid = (title: string) =>
  Type.Object({ identifier: Uuid(), title: OptionalName({ description: 'ignored' }) }, { title });

/** The free-text filter of a find operation, `query`, and its alias `search`. */
export const TextSearch = (description: string) => ({
  query: Type.Optional(Type.String({ description })),
  search: Type.Optional(Type.String({ description: 'alias of query' })),
});
export type Reference = Static<typeof ProcessIdentifiable>;

export const ContactForm = Type.Object(
  {
    name: RequiredName(),
    email: Type.Optional(Type.String({ format: 'email', maxLength: TextBound.email })),
    phoneNumber: Type.Optional(FreeText({ maxLength: TextBound.phoneNumber })),
  },
  { title: 'ContactForm' },
);
export type ContactForm = Static<typeof ContactForm>;

export const Contact = Type.Object(
  {
    name: Type.String(),
    email: Nullable(Type.String()),
    phoneNumber: Nullable(Type.String()),
  },
  { title: 'Contact' },
);

export const UuidParams = Type.Object({ identifier: Uuid({ description: 'the UUID of the resource' }) });

const errorEntry = Type.Object({
  objectName: Type.String(),
  field: Type.String(),
  rejectedValue: Type.Unknown(),
  bindingFailure: Type.Boolean(),
  code: Type.String(),
  codes: Type.Array(Type.String()),
  defaultMessage: Type.String(),
  arguments: Type.Array(Type.Unknown()),
});

/** The common error body of every error status. */
export const ErrorBody = Type.Object(
  {
    timestamp: Type.String({ description: 'UTC, YYYY-MM-DDTHH:mm:ss.SSS' }),
    status: Type.Integer(),
    error: Type.String(),
    exception: Type.String(),
    message: Type.String(),
    path: Type.String(),
    description: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(errorEntry)),
  },
  { title: 'ErrorBody' },
);
