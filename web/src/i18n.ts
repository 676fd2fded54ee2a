import { AUDIT_EN, AUDIT_NB } from './texts/audit.js';
import { CATALOGUE_EN, CATALOGUE_NB } from './texts/catalogue.js';
import { CONSOLE_EN, CONSOLE_NB } from './texts/console.js';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { PLAIN_EN, PLAIN_NB } from './texts/plain.js';
import { STATUS_EN, STATUS_NB } from './texts/status.js';

const en = {
  ...STATUS_EN,
  appName: 'Registry', skip: 'Skip to content', language: 'Language', lookup: 'Look up', catalogue: 'Catalogue',
  signIn: 'Sign in', signOut: 'Sign out', signedInAs: 'Signed in as', username: 'Username', password: 'Password',
  signInHint: 'This tab alone keeps you signed in, across reloads, until you sign out, close the tab or leave it unused for 30 minutes (8 hours at most). Your password is not kept.',
  participants: 'Participants', importFile: 'Import', export: 'Export', serviceProviders: 'Service providers',
  accessPointProviders: 'Access point providers', accessPoints: 'Access points', transportProfiles: 'Transport profiles',
  users: 'Users', navigation: 'Main', loading: 'Loading…', none: 'Nothing found.', search: 'Search', icd: 'ICD',
  organizationNumber: 'Organization number', find: 'Find', lookupTitle: 'Who can receive what',
  lookupIntro: 'Find an organization by its ICD and number to see the processes and document types it can receive.',
  notRegistered: 'No participant is registered for this organization.', processes: 'Processes', documentTypes: 'Document types',
  smpLookup: 'SMP lookup', since: 'since {date}',
  sinceNote: 'Since: the day a participant of the organization was given the process; for a registration older than this record, the day of its last change.', catalogueIntro: 'The processes and document types of the network.',
  filter: 'Filter', title: 'Title', identifier: 'Identifier', restricted: 'Restricted', requiredIcds: 'Required ICDs',
  dependsOn: 'Depends on', name: 'Name', modified: 'Modified', provider: 'Provider', actions: 'Actions',
  add: 'Add', edit: 'Edit', delete: 'Delete', transfer: 'Transfer', save: 'Save', cancel: 'Cancel',
  previous: 'Previous', next: 'Next', pageOf: 'Page {page} of {pages}', totalOf: '{total} in all', pageSize: 'Rows per page',
  sortBy: 'Sort by {column}', sortOrder: 'Order', contactName: 'Contact name', email: 'Email', phone: 'Phone',
  addParticipant: 'Add a participant', editParticipant: 'Edit participant', organizationName: 'Organization name',
  ruleRestricted: 'Closed to new participants by the registry authority; ask the authority to open it if you need it.', ruleIcd: 'Needs one of the ICDs {icds}.', ruleDependency: 'Also needs: {names}.',
  ruleOk: 'Can be added.', confirmDelete: 'Delete {name}? It can not be undone.', transferTo: 'Transfer to',
  transferTitle: 'Transfer {name}', saved: 'Saved.', deleted: 'Deleted.', transferred: 'Transferred.',
  importTitle: 'Import participants', importIntro: 'A JSON lines file, one participant per line (the export\'s format or the add form). Each line is imported on its own: good lines are stored even when others are refused, and a participant you have already is counted as already present, as the command line\'s import counts them.',
  file: 'File', start: 'Start import', line: 'Line', result: 'Result', progressLabel: 'Import progress',
  exportIntro: 'Every participant of yours as one JSON line, ready to import elsewhere.',
  exportDownload: 'Download participants.jsonl', exporting: 'Collecting participants…', exportReady: '{count, plural, one {# participant} other {# participants}} saved as participants.jsonl in your downloads.',
  forbidden: 'This page is not for your role.', needSignIn: 'Sign in to see this page.', notFound: 'No such page.',
  accessPoint: 'Access point', endpoints: 'Endpoints', url: 'URL', transportProfile: 'Transport profile',
  certificateTypes: 'Certificate types', certificate: 'Certificate', expired: 'expired',
  value: 'Value', role: 'Role', contact: 'Contact', codeListRelease: 'Code-list release',
  noConsole: 'Your role has no console here yet; the public pages are open to you.', required: 'required',
  addUser: 'Add a user', addAccessPoint: 'Add an access point', addServiceProvider: 'Add a service provider',
  addAccessPointProvider: 'Add an access point provider', addTransportProfile: 'Add a transport profile',
  commaSeparated: 'comma separated', working: 'Working…', error: 'Error',
  audit: 'Audit trail', deliveries: 'Deliveries', resource: 'Resource', operation: 'Operation', user: 'User', from: 'From', to: 'Until',
  changedAt: 'When', changes: 'Changes', any: 'Any', clearFilters: 'Clear', fieldsChanged: '{count, plural, one {# field} other {# fields}} changed',
  noFieldChanged: 'No field changed', before: 'before', after: 'after',
  auditIntro: 'Who changed what and when, newest first, with each field before and after.',
  auditIntroProvider: 'The history of your participants: who changed what and when, newest first.',
  resourceParticipant: 'Participant', resourceProcess: 'Process', resourceDocumentType: 'Document type',
  resourceAccessPointProvider: 'Access point provider', resourceServiceProvider: 'Service provider', resourceCapability: 'Capability',
  resourceUser: 'User', operationCreate: 'Created', operationUpdate: 'Changed', operationDelete: 'Deleted', operationTransfer: 'Transferred', operationExpire: 'Expired', operationMigrate: 'Migrated', operationWithdraw: 'Withdrawn (code-list removal)',
  deliveriesIntro: 'Participant changes on their way to the SML and the Peppol Directory: what waits, for how long, and the last failure.',
  target: 'Target', pending: 'Pending', oldestPending: 'Oldest pending', failedAttempts: 'Failed attempts', lastError: 'Last error',
  noError: 'None', refresh: 'Refresh', noDeliveries: 'No SML or Directory is configured (SML_URL, DIRECTORY_URL): nothing is delivered.',
  starterList: 'Starter catalogue', identifierSchemesList: 'Participant identifier schemes (ICDs)', loadedAt: 'Loaded',
  certificateExpires: 'certificate expires', noCertificate: 'no certificate (not published)', endpoint: 'Endpoint',
  certificateKept: 'Leave empty to keep the current certificate (expires {date}).', certificateHint: 'PEM or base64 DER. An endpoint without one is not published in the SMP.',
  serviceDescription: 'Service description', technicalContactUrl: 'Technical contact URL', serviceActivationDate: 'Serves from', serviceExpirationDate: 'Serves until',
  requireBusinessLevelSignature: 'Requires a business-level signature',
  catalogueAdmin: 'Edit catalogue', addProcess: 'Add a process', addDocumentType: 'Add a document type', domain: 'Domain', alias: 'Alias', visible: 'Visible',
  newPassword: 'New password', passwordKept: 'Leave empty to keep the current password.',
  codeListNone: 'No code list has been loaded yet: the operator loads one with `registry load-catalogue`.',
  network: 'Place in the network', networkIntro: 'Whether the SML holds this organization for your SMP, and whether the Peppol Directory has it.',
  sml: 'SML', directory: 'Peppol Directory', stateSince: 'Since', stateNone: 'Not configured', stateRegistered: 'Registered',
  statePending: 'Pending', stateHeldElsewhere: 'Held by another SMP', stateRefused: 'Refused', statePushed: 'Pushed',
  stateWaitingForSml: 'Waits for the SML', stuckParticipants: 'Participants held up',
  stuckIntro: 'Organizations another SMP holds, that the SML or the Directory refused, set aside (their delivery keeps failing while the others go through; retried), or whose change waits behind the SML delivery; oldest first.',
  stateSetAside: 'Set aside: its delivery keeps failing, retried', stateNoProcess: 'No process: no part in the organization\'s registration',
  nextAttempt: 'next attempt', setAside: 'Set aside',
  noStuck: 'None: every participant is where it should be.', participant: 'Participant', state: 'State',
  stateMigratingOut: 'Migrating to another SMP', migrationKey: 'Migration key',
  migrationKeyHint: 'From the organization\'s previous provider: the SML moves the organization to your SMP with it.',
  takeOver: 'Take over', giveMigrationKey: 'Give a migration key', withdrawMigrationKey: 'Withdraw the key',
  migrationKeyGiven: 'Give this key to the organization\'s new provider. It is shown this once only:',
  migrationKeySent: 'The key is on its way to the SML.', migrationKeyWithdrawn: 'The key is withdrawn; the organization stays with you.',
  signInLocks: 'Sign-in locks', signInLocksIntro: 'Usernames refused from one address after too many failed password checks, until the time shown; every username of an address that guessed several. Lift a lock when its user is known to be the one signing in.',
  everyUsername: 'every username',
  clientAddress: 'Client address', lockedUntil: 'Locked until', liftLock: 'Lift', liftLockOf: 'Lift the lock of {username} from {address}',
  lockLifted: '{username} can sign in again from that address.', addressLockLifted: 'Every username can sign in again from that address.', resourceSignInLock: 'Sign-in lock', resourceRegisterFlag: 'Enhetsregisteret flag', resourceIdentifierScheme: 'Identifier scheme (ICD)', resourceRemovalNotice: 'Coming code-list removal',
  changePassword: 'Change password', currentPassword: 'Current password', passwordChanged: 'Your password is changed. Use the new one from now on.',
  newPasswordHint: 'At least 12 characters, not your username, not one character repeated, not a common password.',
  ...CONSOLE_EN,
  ...CATALOGUE_EN,
  ...AUDIT_EN,
  ...PLAIN_EN,
} as const;

export type TextKey = keyof typeof en;

const nb: Record<TextKey, string> = {
  ...STATUS_NB,
  appName: 'Registeret', skip: 'Hopp til innholdet', language: 'Språk', lookup: 'Oppslag', catalogue: 'Katalog',
  signIn: 'Logg inn', signOut: 'Logg ut', signedInAs: 'Innlogget som', username: 'Brukernavn', password: 'Passord',
  signInHint: 'Du er pålogget bare i denne fanen, også etter ny innlasting, til du logger ut, lukker fanen eller lar den stå ubrukt i 30 minutter (høyst 8 timer). Passordet ditt lagres ikke.',
  participants: 'Deltakere', importFile: 'Import', export: 'Eksport', serviceProviders: 'Tjenesteleverandører',
  accessPointProviders: 'Aksesspunktleverandører', accessPoints: 'Aksesspunkter', transportProfiles: 'Transportprofiler',
  users: 'Brukere', navigation: 'Hovedmeny', loading: 'Laster…', none: 'Ingen treff.', search: 'Søk', icd: 'ICD',
  organizationNumber: 'Organisasjonsnummer', find: 'Finn', lookupTitle: 'Hvem kan motta hva',
  lookupIntro: 'Finn en virksomhet med ICD og nummer for å se prosessene og dokumenttypene den kan motta.',
  notRegistered: 'Ingen deltaker er registrert for denne virksomheten.', processes: 'Prosesser', documentTypes: 'Dokumenttyper',
  smpLookup: 'SMP-oppslag', since: 'siden {date}',
  sinceNote: 'Siden: dagen en deltaker i virksomheten fikk prosessen; for registreringer eldre enn denne opplysningen, dagen for siste endring.', catalogueIntro: 'Nettverkets prosesser og dokumenttyper.',
  filter: 'Filtrer', title: 'Tittel', identifier: 'Identifikator', restricted: 'Begrenset', requiredIcds: 'Påkrevde ICD-er',
  dependsOn: 'Avhenger av', name: 'Navn', modified: 'Endret', provider: 'Leverandør', actions: 'Handlinger',
  add: 'Legg til', edit: 'Endre', delete: 'Slett', transfer: 'Overfør', save: 'Lagre', cancel: 'Avbryt',
  previous: 'Forrige', next: 'Neste', pageOf: 'Side {page} av {pages}', totalOf: '{total} i alt', pageSize: 'Rader per side',
  sortBy: 'Sorter etter {column}', sortOrder: 'Rekkefølge', contactName: 'Kontaktperson', email: 'E-post', phone: 'Telefon',
  addParticipant: 'Legg til en deltaker', editParticipant: 'Endre deltaker', organizationName: 'Virksomhetens navn',
  ruleRestricted: 'Stengt for nye deltakere av registermyndigheten; be myndigheten åpne den om du trenger den.', ruleIcd: 'Krever en av ICD-ene {icds}.', ruleDependency: 'Krever også: {names}.',
  ruleOk: 'Kan legges til.', confirmDelete: 'Slette {name}? Det kan ikke angres.', transferTo: 'Overfør til',
  transferTitle: 'Overfør {name}', saved: 'Lagret.', deleted: 'Slettet.', transferred: 'Overført.',
  importTitle: 'Importer deltakere', importIntro: 'En JSON lines-fil, én deltaker per linje (eksportformatet eller skjemaet for å legge til). Hver linje importeres for seg: gode linjer lagres selv om andre avvises, og en deltaker du allerede har telles som «fantes fra før», slik kommandolinjens import teller dem.',
  file: 'Fil', start: 'Start import', line: 'Linje', result: 'Resultat', progressLabel: 'Importfremdrift',
  exportIntro: 'Alle deltakerne dine som én JSON-linje hver, klar til import et annet sted.',
  exportDownload: 'Last ned participants.jsonl', exporting: 'Henter deltakere…', exportReady: '{count, plural, one {# deltaker} other {# deltakere}} lagret som participants.jsonl i nedlastingene dine.',
  forbidden: 'Denne siden er ikke for din rolle.', needSignIn: 'Logg inn for å se denne siden.', notFound: 'Siden finnes ikke.',
  accessPoint: 'Aksesspunkt', endpoints: 'Endepunkter', url: 'URL', transportProfile: 'Transportprofil',
  certificateTypes: 'Sertifikattyper', certificate: 'Sertifikat', expired: 'utløpt',
  value: 'Verdi', role: 'Rolle', contact: 'Kontakt', codeListRelease: 'Kodelisteutgave',
  noConsole: 'Din rolle har ingen konsoll her ennå; de offentlige sidene er åpne for deg.', required: 'påkrevd',
  addUser: 'Legg til en bruker', addAccessPoint: 'Legg til et aksesspunkt', addServiceProvider: 'Legg til en tjenesteleverandør',
  addAccessPointProvider: 'Legg til en aksesspunktleverandør', addTransportProfile: 'Legg til en transportprofil',
  commaSeparated: 'kommaseparert', working: 'Arbeider…', error: 'Feil',
  audit: 'Endringslogg', deliveries: 'Leveranser', resource: 'Ressurs', operation: 'Handling', user: 'Bruker', from: 'Fra', to: 'Til',
  changedAt: 'Når', changes: 'Endringer', any: 'Alle', clearFilters: 'Nullstill', fieldsChanged: '{count} felt endret',
  noFieldChanged: 'Ingen felt endret', before: 'før', after: 'etter',
  auditIntro: 'Hvem endret hva og når, nyeste først, med hvert felt før og etter.',
  auditIntroProvider: 'Historikken til deltakerne dine: hvem endret hva og når, nyeste først.',
  resourceParticipant: 'Deltaker', resourceProcess: 'Prosess', resourceDocumentType: 'Dokumenttype',
  resourceAccessPointProvider: 'Aksesspunktleverandør', resourceServiceProvider: 'Tjenesteleverandør', resourceCapability: 'Kapabilitet',
  resourceUser: 'Bruker', operationCreate: 'Opprettet', operationUpdate: 'Endret', operationDelete: 'Slettet', operationTransfer: 'Overført', operationExpire: 'Utløpt', operationMigrate: 'Migrert', operationWithdraw: 'Trukket tilbake (fjernet fra kodelisten)',
  deliveriesIntro: 'Deltakerendringer på vei til SML og Peppol Directory: hva som venter, hvor lenge, og siste feil.',
  target: 'Mottaker', pending: 'Venter', oldestPending: 'Eldste ventende', failedAttempts: 'Mislykkede forsøk', lastError: 'Siste feil',
  noError: 'Ingen', refresh: 'Oppdater', noDeliveries: 'Ingen SML eller Directory er satt opp (SML_URL, DIRECTORY_URL): ingenting leveres.',
  starterList: 'Startkatalog', identifierSchemesList: 'Identifikatorskjemaer for deltakere (ICD)', loadedAt: 'Lastet',
  certificateExpires: 'sertifikatet utløper', noCertificate: 'uten sertifikat (publiseres ikke)', endpoint: 'Endepunkt',
  certificateKept: 'La stå tomt for å beholde sertifikatet (utløper {date}).', certificateHint: 'PEM eller base64 DER. Et endepunkt uten sertifikat publiseres ikke i SMP-en.',
  serviceDescription: 'Tjenestebeskrivelse', technicalContactUrl: 'URL til teknisk kontakt', serviceActivationDate: 'Virker fra', serviceExpirationDate: 'Virker til',
  requireBusinessLevelSignature: 'Krever signatur på forretningsnivå',
  catalogueAdmin: 'Rediger katalog', addProcess: 'Legg til en prosess', addDocumentType: 'Legg til en dokumenttype', domain: 'Domene', alias: 'Alias', visible: 'Synlig',
  newPassword: 'Nytt passord', passwordKept: 'La stå tomt for å beholde passordet.',
  codeListNone: 'Ingen kodeliste er lastet ennå: driftsansvarlig laster en med `registry load-catalogue`.',
  network: 'Plass i nettverket', networkIntro: 'Om SML har denne organisasjonen for din SMP, og om Peppol Directory har den.',
  sml: 'SML', directory: 'Peppol Directory', stateSince: 'Siden', stateNone: 'Ikke satt opp', stateRegistered: 'Registrert',
  statePending: 'Venter', stateHeldElsewhere: 'Holdes av en annen SMP', stateRefused: 'Avvist', statePushed: 'Sendt',
  stateWaitingForSml: 'Venter på SML', stuckParticipants: 'Deltakere som står fast',
  stateSetAside: 'Satt til side: leveransen feiler, prøves igjen', stateNoProcess: 'Ingen prosess: ingen del i organisasjonens registrering',
  nextAttempt: 'neste forsøk', setAside: 'Satt til side',
  stuckIntro: 'Organisasjoner en annen SMP holder, som SML eller Directory avviste, som er satt til side (leveransen feiler mens de andre går gjennom; prøves igjen), eller der en endring venter bak SML-leveransen; eldste først.',
  noStuck: 'Ingen: alle deltakere er der de skal være.', participant: 'Deltaker', state: 'Tilstand',
  stateMigratingOut: 'Flyttes til en annen SMP', migrationKey: 'Flyttenøkkel',
  migrationKeyHint: 'Fra organisasjonens forrige leverandør: SML flytter organisasjonen til din SMP med den.',
  takeOver: 'Overta', giveMigrationKey: 'Gi en flyttenøkkel', withdrawMigrationKey: 'Trekk tilbake nøkkelen',
  migrationKeyGiven: 'Gi denne nøkkelen til organisasjonens nye leverandør. Den vises bare denne ene gangen:',
  migrationKeySent: 'Nøkkelen er på vei til SML.', migrationKeyWithdrawn: 'Nøkkelen er trukket tilbake; organisasjonen blir hos deg.',
  signInLocks: 'Innloggingssperrer', signInLocksIntro: 'Brukernavn som avvises fra én adresse etter for mange mislykkede passordforsøk, til tidspunktet som vises; alle brukernavn fra en adresse som har gjettet på flere. Opphev en sperre når du vet at det er brukeren selv som logger inn.',
  everyUsername: 'alle brukernavn',
  clientAddress: 'Klientadresse', lockedUntil: 'Sperret til', liftLock: 'Opphev', liftLockOf: 'Opphev sperren av {username} fra {address}',
  lockLifted: '{username} kan logge inn fra den adressen igjen.', addressLockLifted: 'Alle brukernavn kan logge inn fra den adressen igjen.', resourceSignInLock: 'Innloggingssperre', resourceRegisterFlag: 'Merknad fra Enhetsregisteret', resourceIdentifierScheme: 'Identifikatorskjema (ICD)', resourceRemovalNotice: 'Kommende fjerning fra kodelistene',
  changePassword: 'Bytt passord', currentPassword: 'Nåværende passord', passwordChanged: 'Passordet ditt er byttet. Bruk det nye fra nå av.',
  newPasswordHint: 'Minst 12 tegn, ikke brukernavnet ditt, ikke ett tegn gjentatt, ikke et vanlig passord.',
  ...CONSOLE_NB,
  ...CATALOGUE_NB,
  ...AUDIT_NB,
  ...PLAIN_NB,
};

export type Language = 'nb' | 'en';
export const TEXTS: Record<Language, Record<TextKey, string>> = { en, nb };

/** Whether `key` names a text (a key made from data, such as a domain's code). */
export const isTextKey = (key: string): key is TextKey => Object.hasOwn(en, key);

export type Translate = (key: TextKey, values?: Record<string, string | number>) => string;

/** `{count, plural, one {# field} other {# fields}}`: the form a number takes in the language (`#` is the number). */
const PLURAL = /\{(\w+), plural, one \{([^{}]*)\} other \{([^{}]*)\}\}/g;

export function translator(language: Language): Translate {
  const rules = new Intl.PluralRules(language === 'nb' ? 'nb-NO' : 'en-GB');
  return (key, values = {}) => TEXTS[language][key]
    .replace(PLURAL, (_, name: string, one: string, other: string) => {
      const count = Number(values[name]);
      return (rules.select(count) === 'one' ? one : other).replace(/#/g, String(values[name]));
    })
    .replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? `{${name}}`));
}

/** The language the console speaks now, for texts made outside components (the API's messages in plain words). */
let active: Language = 'nb';
export const setActiveLanguage = (language: Language) => { active = language; };
export const activeTranslator = (): Translate => translator(active);

export const I18n = createContext<{ t: Translate; language: Language }>({ t: translator('nb'), language: 'nb' });
export const useT = () => useContext(I18n).t;
