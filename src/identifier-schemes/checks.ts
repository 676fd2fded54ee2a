import type { FieldErrorInput } from '../core/errors.js';
import type { IdentifierSchemeList } from './schemes.js';

type Entry = Omit<FieldErrorInput, 'objectName'>;

/** The refusal of a new participant's ICD at `now` (unknown, or removed with its date), as the 400 body's entry; none when taken. */
export function newParticipantIcdErrors(list: IdentifierSchemeList, icd: string, now: Date = new Date()): Entry[] {
  const verdict = list.forNewParticipant(icd, now);
  return verdict.accepted
    ? []
    : [{ field: 'icd', code: verdict.code, rejectedValue: icd, defaultMessage: verdict.reason }];
}

/**
 * The entries for ICDs the registry does not know at all (`field`, or `field[i]` for a list), where an ICD is a filter
 * or a process rule: a removed one is still known there, so its participants can be found.
 */
export function unknownIcdErrors(
  list: IdentifierSchemeList,
  field: string,
  icds: string | readonly string[] | undefined,
): Entry[] {
  if (icds === undefined) return [];
  const named =
    typeof icds === 'string'
      ? [[field, icds] as const]
      : icds.map((icd, index) => [`${field}[${index}]`, icd] as const);
  return named
    .filter(([, icd]) => !list.isKnown(icd))
    .map(([at, icd]) => ({ field: at, code: 'Icd', rejectedValue: icd, defaultMessage: list.unknownReason(icd) }));
}

/**
 * The `Warning` header a new participant's answer carries when its ICD is accepted but deprecated or due for removal
 * (RFC 7234's 299, "miscellaneous persistent warning"; the text is ASCII and holds no quote); undefined when none.
 */
export function newParticipantIcdWarning(
  list: IdentifierSchemeList,
  icd: string,
  now: Date = new Date(),
): string | undefined {
  const verdict = list.forNewParticipant(icd, now);
  return verdict.accepted && verdict.warning !== undefined ? `299 registry "${verdict.warning}"` : undefined;
}
