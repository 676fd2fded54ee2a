import type { Schemas } from './api/types.js';

type OrganizationProcess = Schemas['OrganizationProcess'];

export interface ReceivableDocumentType {
  identifier: string;
  title: string;
  qualifiedIdentifier: string;
  /** The earliest day one of the organization's processes that carries it was given to it. */
  since: string;
}

/** The document types an organization can receive, each once, by title, since its earliest process carrying it. */
export function receivableDocumentTypes(processes: readonly OrganizationProcess[]): ReceivableDocumentType[] {
  const types = new Map<string, ReceivableDocumentType>();
  for (const process of processes) {
    for (const type of process.documentTypes) {
      const known = types.get(type.identifier);
      if (!known || process.receivableSince < known.since) {
        types.set(type.identifier, {
          identifier: type.identifier,
          title: type.title,
          qualifiedIdentifier: type.qualifiedIdentifier,
          since: process.receivableSince,
        });
      }
    }
  }
  return [...types.values()].sort(
    (a, b) => a.title.localeCompare(b.title) || a.qualifiedIdentifier.localeCompare(b.qualifiedIdentifier),
  );
}
