import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

const en = {
  appName: 'Registry', skip: 'Skip to content', language: 'Language', lookup: 'Look up', catalogue: 'Catalogue',
  signIn: 'Sign in', signOut: 'Sign out', signedInAs: 'Signed in as', username: 'Username', password: 'Password',
  signInHint: 'Your credentials stay in this tab only: a reload or sign-out forgets them.',
  participants: 'Participants', importFile: 'Import', export: 'Export', serviceProviders: 'Service providers',
  accessPointProviders: 'Access point providers', accessPoints: 'Access points', transportProfiles: 'Transport profiles',
  users: 'Users', navigation: 'Main', loading: 'Loading…', none: 'Nothing found.', search: 'Search', icd: 'ICD',
  organizationNumber: 'Organization number', find: 'Find', lookupTitle: 'Who can receive what',
  lookupIntro: 'Find an organization by its ICD and number to see the processes and document types it can receive.',
  notRegistered: 'No participant is registered for this organization.', processes: 'Processes', documentTypes: 'Document types',
  smpLookup: 'SMP lookup', registeredSince: 'Registered since', catalogueIntro: 'The processes and document types of the network.',
  filter: 'Filter', title: 'Title', identifier: 'Identifier', restricted: 'Restricted', requiredIcds: 'Required ICDs',
  dependsOn: 'Depends on', name: 'Name', modified: 'Modified', provider: 'Provider', actions: 'Actions',
  add: 'Add', edit: 'Edit', delete: 'Delete', transfer: 'Transfer', save: 'Save', cancel: 'Cancel', close: 'Close',
  previous: 'Previous', next: 'Next', pageOf: 'Page {page} of {pages}', totalOf: '{total} in all', pageSize: 'Rows per page',
  sortBy: 'Sort by {column}', sortOrder: 'Order', contactName: 'Contact name', email: 'Email', phone: 'Phone',
  addParticipant: 'Add a participant', editParticipant: 'Edit participant', organizationName: 'Organization name',
  ruleRestricted: 'Restricted: cannot be added.', ruleIcd: 'Needs one of the ICDs {icds}.', ruleDependency: 'Also needs: {names}.',
  ruleOk: 'Can be added.', confirmDelete: 'Delete {name}? It can not be undone.', transferTo: 'Transfer to',
  transferTitle: 'Transfer {name}', saved: 'Saved.', deleted: 'Deleted.', transferred: 'Transferred.',
  importTitle: 'Import participants', importIntro: 'A JSON lines file, one participant per line (the export\'s format or the add form). Each line is added on its own: good lines are stored even when others fail.',
  file: 'File', start: 'Start import', line: 'Line', result: 'Result', imported: 'Added', progressLabel: 'Import progress',
  importSummary: '{ok} added, {failed} failed, of {total} lines.', exportIntro: 'Every participant of yours as one JSON line, ready to import elsewhere.',
  exportDownload: 'Download participants.jsonl', exporting: 'Collecting participants…', exportReady: '{count} participants ready.',
  forbidden: 'This page is not for your role.', needSignIn: 'Sign in to see this page.', notFound: 'No such page.',
  accessPoint: 'Access point', endpoints: 'Endpoints', url: 'URL', transportProfile: 'Transport profile',
  certificateTypes: 'Certificate types', certificate: 'Certificate', expires: 'Expires', expired: 'expired',
  value: 'Value', role: 'Role', contact: 'Contact', codeListRelease: 'Code-list release',
  codeListUnknown: 'The API does not say which code-list release the catalogue follows; the operator sees it with `registry load-catalogue`.',
  noConsole: 'Your role has no console here yet; the public pages are open to you.', required: 'required',
  addUser: 'Add a user', addAccessPoint: 'Add an access point', addServiceProvider: 'Add a service provider',
  addAccessPointProvider: 'Add an access point provider', addTransportProfile: 'Add a transport profile',
  commaSeparated: 'comma separated', working: 'Working…', error: 'Error',
} as const;

export type TextKey = keyof typeof en;

const nb: Record<TextKey, string> = {
  appName: 'Registeret', skip: 'Hopp til innholdet', language: 'Språk', lookup: 'Oppslag', catalogue: 'Katalog',
  signIn: 'Logg inn', signOut: 'Logg ut', signedInAs: 'Innlogget som', username: 'Brukernavn', password: 'Passord',
  signInHint: 'Påloggingen gjelder bare denne fanen: en ny innlasting eller utlogging glemmer den.',
  participants: 'Deltakere', importFile: 'Import', export: 'Eksport', serviceProviders: 'Tjenesteleverandører',
  accessPointProviders: 'Aksesspunktleverandører', accessPoints: 'Aksesspunkter', transportProfiles: 'Transportprofiler',
  users: 'Brukere', navigation: 'Hovedmeny', loading: 'Laster…', none: 'Ingen treff.', search: 'Søk', icd: 'ICD',
  organizationNumber: 'Organisasjonsnummer', find: 'Finn', lookupTitle: 'Hvem kan motta hva',
  lookupIntro: 'Finn en virksomhet med ICD og nummer for å se prosessene og dokumenttypene den kan motta.',
  notRegistered: 'Ingen deltaker er registrert for denne virksomheten.', processes: 'Prosesser', documentTypes: 'Dokumenttyper',
  smpLookup: 'SMP-oppslag', registeredSince: 'Registrert siden', catalogueIntro: 'Nettverkets prosesser og dokumenttyper.',
  filter: 'Filtrer', title: 'Tittel', identifier: 'Identifikator', restricted: 'Begrenset', requiredIcds: 'Påkrevde ICD-er',
  dependsOn: 'Avhenger av', name: 'Navn', modified: 'Endret', provider: 'Leverandør', actions: 'Handlinger',
  add: 'Legg til', edit: 'Endre', delete: 'Slett', transfer: 'Overfør', save: 'Lagre', cancel: 'Avbryt', close: 'Lukk',
  previous: 'Forrige', next: 'Neste', pageOf: 'Side {page} av {pages}', totalOf: '{total} i alt', pageSize: 'Rader per side',
  sortBy: 'Sorter etter {column}', sortOrder: 'Rekkefølge', contactName: 'Kontaktperson', email: 'E-post', phone: 'Telefon',
  addParticipant: 'Legg til en deltaker', editParticipant: 'Endre deltaker', organizationName: 'Virksomhetens navn',
  ruleRestricted: 'Begrenset: kan ikke legges til.', ruleIcd: 'Krever en av ICD-ene {icds}.', ruleDependency: 'Krever også: {names}.',
  ruleOk: 'Kan legges til.', confirmDelete: 'Slette {name}? Det kan ikke angres.', transferTo: 'Overfør til',
  transferTitle: 'Overfør {name}', saved: 'Lagret.', deleted: 'Slettet.', transferred: 'Overført.',
  importTitle: 'Importer deltakere', importIntro: 'En JSON lines-fil, én deltaker per linje (eksportformatet eller skjemaet for å legge til). Hver linje legges til for seg: gode linjer lagres selv om andre feiler.',
  file: 'Fil', start: 'Start import', line: 'Linje', result: 'Resultat', imported: 'Lagt til', progressLabel: 'Importfremdrift',
  importSummary: '{ok} lagt til, {failed} feilet, av {total} linjer.', exportIntro: 'Alle deltakerne dine som én JSON-linje hver, klar til import et annet sted.',
  exportDownload: 'Last ned participants.jsonl', exporting: 'Henter deltakere…', exportReady: '{count} deltakere klare.',
  forbidden: 'Denne siden er ikke for din rolle.', needSignIn: 'Logg inn for å se denne siden.', notFound: 'Siden finnes ikke.',
  accessPoint: 'Aksesspunkt', endpoints: 'Endepunkter', url: 'URL', transportProfile: 'Transportprofil',
  certificateTypes: 'Sertifikattyper', certificate: 'Sertifikat', expires: 'Utløper', expired: 'utløpt',
  value: 'Verdi', role: 'Rolle', contact: 'Kontakt', codeListRelease: 'Kodelisteutgave',
  codeListUnknown: 'API-et oppgir ikke hvilken kodelisteutgave katalogen følger; driftsansvarlig ser den med `registry load-catalogue`.',
  noConsole: 'Din rolle har ingen konsoll her ennå; de offentlige sidene er åpne for deg.', required: 'påkrevd',
  addUser: 'Legg til en bruker', addAccessPoint: 'Legg til et aksesspunkt', addServiceProvider: 'Legg til en tjenesteleverandør',
  addAccessPointProvider: 'Legg til en aksesspunktleverandør', addTransportProfile: 'Legg til en transportprofil',
  commaSeparated: 'kommaseparert', working: 'Arbeider…', error: 'Feil',
};

export type Language = 'nb' | 'en';
export const TEXTS: Record<Language, Record<TextKey, string>> = { en, nb };

export type Translate = (key: TextKey, values?: Record<string, string | number>) => string;

export function translator(language: Language): Translate {
  return (key, values = {}) => TEXTS[language][key].replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? `{${name}}`));
}

export const I18n = createContext<{ t: Translate; language: Language }>({ t: translator('nb'), language: 'nb' });
export const useT = () => useContext(I18n).t;
