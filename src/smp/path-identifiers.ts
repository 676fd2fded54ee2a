import { ApiError } from '../core/errors.js';
import { hasIcdShape, parseQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import { characterXmlCannotCarry } from '../core/xml-text.js';
import { PARTICIPANT_SCHEME, type Organization } from '../participants/identifiers.js';

/** 400 in the common error body: the path names an identifier that does not parse. */
class InvalidIdentifierError extends ApiError {
  constructor(message: string) {
    super(400, message);
  }
}

/** Longer than any stored value (see the bounds of the participant and catalogue tables). */
const MAX_VALUE_LENGTH = 500;
const MAX_SCHEME_LENGTH = 100;

/** Whether a path segment is meant as an identifier at all (`scheme::value`); other paths are not the SMP's. */
export function looksLikeIdentifier(segment: string): boolean {
  return segment.includes('::');
}

/**
 * `scheme::value`, split at the first `::` (values, such as document type ids, may contain `::` themselves). One
 * holding a character XML cannot carry (which only a row stored before the registry refused them can have) cannot be
 * answered with the identifier it asked for: it is refused, not answered with another.
 */
export function parseIdentifier(segment: string, noun: string): QualifiedIdentifier {
  const unwritable = characterXmlCannotCarry(segment);
  if (unwritable) throw new InvalidIdentifierError(`Invalid ${noun} identifier: it holds ${unwritable}, which XML cannot carry`);
  const id = parseQualifiedIdentifier(segment);
  if (!id) throw new InvalidIdentifierError(`Invalid ${noun} identifier '${segment}': expected scheme::value`);
  if (id.scheme.length > MAX_SCHEME_LENGTH || id.value.length > MAX_VALUE_LENGTH) {
    throw new InvalidIdentifierError(`Invalid ${noun} identifier: longer than ${MAX_SCHEME_LENGTH} (scheme) or ${MAX_VALUE_LENGTH} (value) characters`);
  }
  return id;
}

/**
 * The organization a participant identifier names, or undefined when no registered organization can have it (a scheme
 * other than `iso6523-actorid-upis`, compared case-sensitively, or an ICD not of four digits). The value is case-insensitive:
 * organizations are stored in lower case. Throws when the identifier does not parse.
 */
export function organizationOf(id: QualifiedIdentifier): Organization | undefined {
  const colon = id.value.indexOf(':');
  if (colon <= 0 || colon === id.value.length - 1) {
    throw new InvalidIdentifierError(`Invalid participant identifier value '${id.value}': expected <ICD>:<identifier>`);
  }
  const icd = id.value.slice(0, colon);
  if (id.scheme !== PARTICIPANT_SCHEME || !hasIcdShape(icd)) return undefined;
  return { icd, organizationIdentifier: id.value.slice(colon + 1).toLowerCase() };
}

/** The participant identifier as stored and published. */
export const participantIdentifierOf = (organization: Organization): QualifiedIdentifier =>
  ({ scheme: PARTICIPANT_SCHEME, value: `${organization.icd}:${organization.organizationIdentifier}` });
