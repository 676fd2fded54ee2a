import { asciiLowerCase } from '../core/ascii-case.js';
import { NotFoundError } from '../core/errors.js';
import { formatQualifiedIdentifier, hasIcdShape, parseQualifiedIdentifier } from '../core/schemas.js';

/** The scheme of every participant's qualified identifier. */
export const PARTICIPANT_SCHEME = 'iso6523-actorid-upis';

/** An organization: its ICD and its identifier in canonical lower case. */
export interface Organization {
  icd: string;
  organizationIdentifier: string;
}

/** How a path segment names a participant: by UUID, or by the qualified identifier of its organization. */
export type ParticipantKey = { kind: 'identifier'; id: string } | { kind: 'qualified'; organization: Organization };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(segment: string): boolean {
  return UUID.test(segment);
}

/** `<icd>:<organizationIdentifier>` in canonical form, the participant's qualified identifier value. */
export function qualifiedIdentifierOf(organization: Organization): string {
  return formatQualifiedIdentifier({
    scheme: PARTICIPANT_SCHEME,
    value: `${organization.icd}:${organization.organizationIdentifier}`,
  });
}

/** Whether a scheme is the participants' (case-insensitive, as their values: Peppol's Policy for use of Identifiers, POLICY 2). */
export const isParticipantScheme = (scheme: string) => asciiLowerCase(scheme) === PARTICIPANT_SCHEME;

/** An organization identifier as stored: case-insensitive, in lower case (ASCII letters only, as identifiers are ASCII). */
export const storedOrganizationIdentifier = asciiLowerCase;

/**
 * Parses `iso6523-actorid-upis::<icd>:<organizationIdentifier>` (scheme and value case-insensitive);
 * undefined for anything that cannot name a registered organization.
 */
export function parseOrganization(qualifiedIdentifier: string): Organization | undefined {
  const named = parseQualifiedIdentifier(qualifiedIdentifier);
  if (!named || !isParticipantScheme(named.scheme)) return undefined;
  const { value } = named;
  const colon = value.indexOf(':');
  const icd = value.slice(0, colon);
  const organizationIdentifier = storedOrganizationIdentifier(value.slice(colon + 1));
  if (colon < 0 || !hasIcdShape(icd) || organizationIdentifier.length === 0) return undefined;
  return { icd, organizationIdentifier };
}

/** A UUID segment is an identifier, anything else a qualified identifier (undefined when it names nothing). */
function participantKeyOf(segment: string): ParticipantKey | undefined {
  if (isUuid(segment)) return { kind: 'identifier', id: segment.toLowerCase() };
  const organization = parseOrganization(segment);
  return organization ? { kind: 'qualified', organization } : undefined;
}

/** The participant 404, the same for an unknown participant and for another provider's. */
export const participantNotFound = (segment: string) => NotFoundError.organization(segment);

/** The key a path segment names; the participant 404 when it can name none. */
export function participantKeyOrNotFound(segment: string): ParticipantKey {
  const key = participantKeyOf(segment);
  if (!key) throw participantNotFound(segment);
  return key;
}
