import { ApiError, NotFoundError } from '../core/errors.js';
import { hasIcdShape, parseQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import { characterXmlCannotCarry } from '../core/xml-text.js';
import {
  isParticipantScheme,
  PARTICIPANT_SCHEME,
  storedOrganizationIdentifier,
  type Organization,
} from '../participants/identifiers.js';

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
  if (unwritable)
    throw new InvalidIdentifierError(`Invalid ${noun} identifier: it holds ${unwritable}, which XML cannot carry`);
  const id = parseQualifiedIdentifier(segment);
  if (!id) throw new InvalidIdentifierError(`Invalid ${noun} identifier '${segment}': expected scheme::value`);
  if (id.scheme.length > MAX_SCHEME_LENGTH || id.value.length > MAX_VALUE_LENGTH) {
    throw new InvalidIdentifierError(
      `Invalid ${noun} identifier: longer than ${MAX_SCHEME_LENGTH} (scheme) or ${MAX_VALUE_LENGTH} (value) characters`,
    );
  }
  return id;
}

/**
 * A participant as a lookup names it: its organization, and its identifier as the request spells it, which the answer
 * repeats (a client compares the identifiers of an answer with those it asked for, the scheme exactly: see "Case rules"
 * in docs/design/smp.md).
 */
export interface NamedParticipant {
  organization: Organization;
  spelled: QualifiedIdentifier;
  /** Whether it is spelled as stored and published: only such answers are kept, so no spelling crowds out another. */
  asStored: boolean;
}

/**
 * The participant a participant identifier names, or undefined when no registered organization can have it (a scheme
 * other than `iso6523-actorid-upis` or an unknown ICD). Scheme and value are case-insensitive (Peppol's Policy for use
 * of Identifiers, POLICY 2): organizations are stored in lower case. Throws when the identifier does not parse.
 */
export function participantOf(id: QualifiedIdentifier): NamedParticipant | undefined {
  const colon = id.value.indexOf(':');
  if (colon <= 0 || colon === id.value.length - 1) {
    throw new InvalidIdentifierError(`Invalid participant identifier value '${id.value}': expected <ICD>:<identifier>`);
  }
  const icd = id.value.slice(0, colon);
  if (!isParticipantScheme(id.scheme) || !hasIcdShape(icd)) return undefined;
  const organization = { icd, organizationIdentifier: storedOrganizationIdentifier(id.value.slice(colon + 1)) };
  const stored = participantIdentifierOf(organization);
  return { organization, spelled: id, asStored: id.scheme === stored.scheme && id.value === stored.value };
}

/** The participant identifier as stored and published. */
export const participantIdentifierOf = (organization: Organization): QualifiedIdentifier => ({
  scheme: PARTICIPANT_SCHEME,
  value: `${organization.icd}:${organization.organizationIdentifier}`,
});

/** The participant a participant path segment names: 400 when it does not parse, 404 when none can have it. */
export function participantNamed(segment: string): NamedParticipant {
  const found = participantOf(parseIdentifier(segment, 'participant'));
  if (!found) throw new NotFoundError(`No service group is published for participant '${segment}'`);
  return found;
}

/**
 * What a service metadata lookup names, from its two decoded path segments; throws as `participantNamed`. The
 * document type is matched exactly, scheme and value (POLICY 2): the answer repeats it as asked and as stored.
 */
export function serviceLookupOf(
  participantSegment: string,
  documentTypeSegment: string,
): { participant: NamedParticipant; documentType: QualifiedIdentifier } {
  return {
    participant: participantNamed(participantSegment),
    documentType: parseIdentifier(documentTypeSegment, 'document type'),
  };
}
