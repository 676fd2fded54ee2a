/**
 * Texts of the catalogue's forms (a process's links, a document type's processes, capabilities, an access point's
 * endpoints) and of the process picker's domains (i18n.ts takes them into both languages).
 */
export const CATALOGUE_EN = {
  capabilities: 'Capabilities',
  addCapability: 'Add a capability',
  linksNoneChosen: 'None chosen yet.',
  linksFilter: 'Filter {what} by name or identifier',
  linksCandidates: '{what} that can be added',
  endpointNumber: 'Endpoint {number}',
  addEndpoint: 'Add an endpoint',
  removeEndpoint: 'Remove endpoint {number}',
  noEndpoints: 'No endpoint: the access point is not published until it has one with a certificate.',
  domainPOAC: 'Post-award procurement',
  'domainPOAC-France': 'Post-award procurement, France',
  domainPRAC: 'Pre-award procurement',
  domainOO: 'Peppol operations (reporting)',
  domaineB2B: 'Business to business (eB2B)',
  domainLogistics: 'Logistics',
  'domainExtended use': 'Extended use',
  'domainNorwegian Payment': 'Norwegian payments',
} as const;

export const CATALOGUE_NB: Record<keyof typeof CATALOGUE_EN, string> = {
  capabilities: 'Kapabiliteter',
  addCapability: 'Legg til en kapabilitet',
  linksNoneChosen: 'Ingen er valgt ennå.',
  linksFilter: 'Filtrer {what} på navn eller identifikator',
  linksCandidates: '{what} som kan legges til',
  endpointNumber: 'Endepunkt {number}',
  addEndpoint: 'Legg til et endepunkt',
  removeEndpoint: 'Fjern endepunkt {number}',
  noEndpoints: 'Ingen endepunkter: aksesspunktet publiseres ikke før det har ett med sertifikat.',
  domainPOAC: 'Innkjøp etter kontraktstildeling',
  'domainPOAC-France': 'Innkjøp etter kontraktstildeling, Frankrike',
  domainPRAC: 'Innkjøp før kontraktstildeling',
  domainOO: 'Peppol-drift (rapportering)',
  domaineB2B: 'Mellom virksomheter (eB2B)',
  domainLogistics: 'Logistikk',
  'domainExtended use': 'Utvidet bruk',
  'domainNorwegian Payment': 'Norske betalinger',
};
