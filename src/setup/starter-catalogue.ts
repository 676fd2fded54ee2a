import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Catalogue, DocumentTypeEntry, ProcessEntry, TransportProfileEntry } from '../code-lists/catalogue.js';

interface StarterFile {
  version: string;
  transportProfiles: TransportProfileEntry[];
  processes: ProcessEntry[];
  documentTypes: DocumentTypeEntry[];
}

/** The project's own small catalogue of the core Peppol BIS processes, loaded at the first start. */
export async function starterCatalogue(): Promise<Catalogue> {
  const path = join(dirname(fileURLToPath(import.meta.url)), 'starter-catalogue.json');
  const starter = JSON.parse(await readFile(path, 'utf8')) as StarterFile;
  return {
    sources: [{ list: 'starter', version: starter.version }],
    transportProfiles: starter.transportProfiles,
    processes: starter.processes,
    documentTypes: starter.documentTypes,
  };
}
