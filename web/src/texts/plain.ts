/**
 * Texts of issue 48's plain words and small things (i18n.ts takes them into both languages): characters named in
 * words, a locked sign-in, a registry out of reach, the network's failures, role and target names, the import's
 * fields, the password form, the version.
 */
export const PLAIN_EN = {
  plainSpaceRefused: 'Spaces are not allowed here.',
  plainCharacterRefused:
    '{character} is not allowed here: only the letters A to Z, digits and punctuation, with no spaces.',
  plainCharacterXml: '{character} cannot be stored here: remove it.',
  characterTab: 'A tab',
  characterLineBreak: 'A line break',
  characterNoBreakSpace: 'A non-breaking space',
  characterControl: 'An invisible control character ({code})',
  characterShown: 'The character “{character}”',
  signInLocked:
    'This sign-in is locked after too many wrong passwords. Try again in {wait}, or ask an administrator to lift the lock (Users, Sign-in locks).',
  waitMinutes: '{count, plural, one {# minute} other {# minutes}}',
  waitSeconds: '{count, plural, one {# second} other {# seconds}}',
  unreachable: 'The registry cannot be reached: check your connection and try again in a moment.',
  peerUnreachable: 'The {target} could not be reached; the delivery is tried again by itself.',
  peerSlow: 'The {target} did not answer in time; the delivery is tried again by itself.',
  roleADMIN: 'Administrator',
  roleREGISTRY_AUTHORITY: 'Registry authority',
  roleSERVICE_PROVIDER: 'Service provider',
  roleACCESS_POINT_PROVIDER: 'Access point provider',
  importLineRefused: 'Nothing was saved from this line:',
  importUnreachable:
    'Not sent: the registry cannot be reached. The import stopped here; start it again to send the rest.',
  importExample: 'An example line:',
  processNumber: 'Process {number}',
  deleteDate: 'Delete date',
  sourceIndicator: 'Source indicator',
  organizationPart: 'Organization part',
  repeatPassword: 'New password again',
  passwordsDiffer: 'The two new passwords differ: type the same one twice.',
  passwordTooShort: 'Too short: at least 12 characters ({count, plural, one {# is} other {# are}} typed).',
  icdName: 'ICD {icd}: {name}',
  icdUnknown: 'ICD {icd} is not in the loaded identifier schemes.',
  certificateNotPeppol:
    'The SMP signs with a certificate that is not issued by the Peppol SMP CA ({issuer}): no network client trusts it.',
  certificateSelfSigned: 'The SMP signs with a self-signed certificate ({subject}): no network client trusts it.',
  noStuckUnconfigured: 'No SML or Directory is configured, so no participant is delivered and none is held up.',
  versionFooter: 'Registry {version}',
} as const;

export const PLAIN_NB: Record<keyof typeof PLAIN_EN, string> = {
  plainSpaceRefused: 'Mellomrom er ikke tillatt her.',
  plainCharacterRefused:
    '{character} er ikke tillatt her: bare bokstavene A til Z (ikke æ, ø, å), sifre og skilletegn, uten mellomrom.',
  plainCharacterXml: '{character} kan ikke lagres her: fjern det.',
  characterTab: 'Et tabulatortegn',
  characterLineBreak: 'Et linjeskift',
  characterNoBreakSpace: 'Et hardt mellomrom',
  characterControl: 'Et usynlig kontrolltegn ({code})',
  characterShown: 'Tegnet «{character}»',
  signInLocked:
    'Denne innloggingen er sperret etter for mange feil passord. Prøv igjen om {wait}, eller be en administrator oppheve sperren (Brukere, Innloggingssperrer).',
  waitMinutes: '{count, plural, one {# minutt} other {# minutter}}',
  waitSeconds: '{count, plural, one {# sekund} other {# sekunder}}',
  unreachable: 'Registeret kan ikke nås: sjekk tilkoblingen og prøv igjen om litt.',
  peerUnreachable: '{target} kunne ikke nås; leveransen prøves igjen av seg selv.',
  peerSlow: '{target} svarte ikke i tide; leveransen prøves igjen av seg selv.',
  roleADMIN: 'Administrator',
  roleREGISTRY_AUTHORITY: 'Registermyndighet',
  roleSERVICE_PROVIDER: 'Tjenesteleverandør',
  roleACCESS_POINT_PROVIDER: 'Aksesspunktleverandør',
  importLineRefused: 'Ingenting fra denne linjen ble lagret:',
  importUnreachable: 'Ikke sendt: registeret kan ikke nås. Importen stoppet her; start den igjen for å sende resten.',
  importExample: 'Et eksempel på en linje:',
  processNumber: 'Prosess {number}',
  deleteDate: 'Slettedato',
  sourceIndicator: 'Kildeindikator',
  organizationPart: 'Del av virksomheten',
  repeatPassword: 'Nytt passord en gang til',
  passwordsDiffer: 'De to nye passordene er ulike: skriv det samme to ganger.',
  passwordTooShort: 'For kort: minst 12 tegn ({count} er skrevet).',
  icdName: 'ICD {icd}: {name}',
  icdUnknown: 'ICD {icd} finnes ikke i de innlastede identifikatorskjemaene.',
  certificateNotPeppol:
    'SMP signerer med et sertifikat som ikke er utstedt av Peppols SMP-CA ({issuer}): ingen klient i nettverket stoler på det.',
  certificateSelfSigned:
    'SMP signerer med et selvsignert sertifikat ({subject}): ingen klient i nettverket stoler på det.',
  noStuckUnconfigured: 'Ingen SML eller Directory er satt opp, så ingen deltaker leveres og ingen står fast.',
  versionFooter: 'Registeret {version}',
};
