/**
 * The catalogue as the loader takes it: processes, document types with their process links, transport
 * profiles, participant identifier schemes (the ICDs). The Peppol code lists (`codelists.ts`) and the project's starter catalogue
 * (`src/setup/starter-catalogue.json`) are both read into this shape.
 */
import { formatQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import type { IdentifierScheme } from '../identifier-schemes/schemes.js';

/** The lifecycle state of a code-list entry. Deprecated and removed entries become `restricted`. */
export type EntryState = 'active' | 'deprecated' | 'removed';
export const ENTRY_STATES: readonly EntryState[] = ['active', 'deprecated', 'removed'];

/** What a code list says of an entry's life: its state, and the instant it stops being published (its removal date). */
export interface EntryLife {
  state: EntryState;
  /** The start (UTC) of the list's `removal-date`, an ISO 8601 instant; absent when the list gives none. */
  removedFrom?: string;
}

export interface ProcessEntry extends QualifiedIdentifier, EntryLife {
  /** The Peppol process list names no titles: when absent, one is made from the identifier. */
  title?: string;
  /** When absent, the domain community of the document types that name the process, else its scheme. */
  domain?: string;
}

export interface DocumentTypeEntry extends QualifiedIdentifier, EntryLife {
  title: string;
  domainCommunity: string | null;
  processes: QualifiedIdentifier[];
}

export interface TransportProfileEntry {
  value: string;
  title: string;
  state: EntryState;
}

/** Which list was loaded and its version, remembered in `catalogue_sources`. */
export interface CatalogueSource {
  list: 'processes' | 'document-types' | 'transport-profiles' | 'participant-identifier-schemes' | 'starter';
  version: string;
}

export interface Catalogue {
  sources: CatalogueSource[];
  processes: ProcessEntry[];
  documentTypes: DocumentTypeEntry[];
  transportProfiles: TransportProfileEntry[];
  identifierSchemes: IdentifierScheme[];
}

export const emptyCatalogue = (): Catalogue => ({
  sources: [],
  processes: [],
  documentTypes: [],
  transportProfiles: [],
  identifierSchemes: [],
});

/** Several files (or the lists of one directory) as one catalogue; a later entry with the same key wins. */
export function mergeCatalogues(parts: readonly Catalogue[]): Catalogue {
  const merged = emptyCatalogue();
  const processes = new Map<string, ProcessEntry>();
  const documentTypes = new Map<string, DocumentTypeEntry>();
  const transportProfiles = new Map<string, TransportProfileEntry>();
  const identifierSchemes = new Map<string, IdentifierScheme>();
  for (const part of parts) {
    merged.sources.push(...part.sources);
    for (const entry of part.processes) processes.set(formatQualifiedIdentifier(entry), entry);
    for (const entry of part.documentTypes) documentTypes.set(formatQualifiedIdentifier(entry), entry);
    for (const entry of part.transportProfiles) transportProfiles.set(entry.value, entry);
    for (const entry of part.identifierSchemes) identifierSchemes.set(entry.icd, entry);
  }
  merged.processes = [...processes.values()];
  merged.documentTypes = [...documentTypes.values()];
  merged.transportProfiles = [...transportProfiles.values()];
  merged.identifierSchemes = [...identifierSchemes.values()];
  return merged;
}

/** The process value the lists give document types sent outside any process. */
const NO_PROCESS = 'none';

/**
 * A readable title for a process identifier, since the Peppol process list carries none:
 * `urn:fdc:peppol.eu:2017:poacc:billing:01:1.0` becomes `Peppol poacc billing 01 1.0`,
 * `urn:peppol:bis:billing_with_response` becomes `Peppol BIS billing with response`, and `none` (the process of
 * documents sent outside any, such as the Virtual Company Dossier) `No process (none)`.
 */
export function processTitleOf(value: string): string {
  if (value === NO_PROCESS) return 'No process (none)';
  const words = value
    .replace(/^urn:/i, '')
    .split(':')
    .filter((segment) => segment !== '' && segment.toLowerCase() !== 'fdc' && !/^(19|20)\d\d$/.test(segment))
    .map(readableSegment);
  const title = words.join(' ').replace(/\s+/g, ' ').trim();
  return title === '' ? value : title;
}

function readableSegment(segment: string): string {
  const lower = segment.toLowerCase();
  if (lower === 'peppol' || lower === 'peppol.eu') return 'Peppol';
  if (lower === 'bis') return 'BIS';
  if (lower.includes('.')) return segment.replace(/^www\./i, '');
  return segment.replace(/[_-]+/g, ' ');
}

/** The most frequent domain community of the document types naming each process (ties: alphabetical). */
export function processDomains(documentTypes: readonly DocumentTypeEntry[]): Map<string, string> {
  const counts = new Map<string, Map<string, number>>();
  for (const documentType of documentTypes) {
    if (!documentType.domainCommunity) continue;
    for (const process of documentType.processes) {
      const byDomain = counts.get(formatQualifiedIdentifier(process)) ?? new Map<string, number>();
      byDomain.set(documentType.domainCommunity, (byDomain.get(documentType.domainCommunity) ?? 0) + 1);
      counts.set(formatQualifiedIdentifier(process), byDomain);
    }
  }
  const domains = new Map<string, string>();
  for (const [process, byDomain] of counts) {
    const [best] = [...byDomain].sort(([a, countA], [b, countB]) => countB - countA || a.localeCompare(b));
    if (best) domains.set(process, best[0]);
  }
  return domains;
}
