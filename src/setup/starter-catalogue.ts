import { access, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Catalogue, DocumentTypeEntry, ProcessEntry, TransportProfileEntry } from '../code-lists/catalogue.js';
import { readCodeLists } from '../code-lists/codelists.js';

interface StarterFile {
  version: string;
  transportProfiles: TransportProfileEntry[];
  processes: ProcessEntry[];
  documentTypes: DocumentTypeEntry[];
}

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The shipped Participant Identifier Schemes list (reference-data/, next to src/ and dist/ alike): a first start
 * follows the code list's ICDs, 0242 among them, rather than the specification's snapshot.
 */
export const SHIPPED_IDENTIFIER_SCHEMES = join(
  here,
  '..',
  '..',
  'reference-data',
  'peppol-codelists-v9.7',
  'participant-identifier-schemes.xml',
);

/** The shipped code lists are not beside the program: the checkout or release lacks `reference-data/`. */
export class ReferenceDataMissingError extends Error {}

/**
 * Fails in plain words, before any database opens, when the shipped identifier schemes list is not there: a first
 * start sets the ICDs up from it, and every start reads the ICDs' countries (business cards) from it.
 */
export async function checkReferenceData(): Promise<void> {
  await access(SHIPPED_IDENTIFIER_SCHEMES).catch(() => {
    throw new ReferenceDataMissingError(
      `The shipped code lists are missing: ${SHIPPED_IDENTIFIER_SCHEMES} is not there. The registry runs ` +
        'from its checkout or release with reference-data/ beside src/ and dist/: restore that directory (git checkout -- reference-data).',
    );
  });
}

/**
 * The project's own small catalogue of the core Peppol processes (the Message Level Status among them), with the
 * shipped identifier schemes, loaded at the first start.
 */
export async function starterCatalogue(): Promise<Catalogue> {
  const starter = JSON.parse(await readFile(join(here, 'starter-catalogue.json'), 'utf8')) as StarterFile;
  const { catalogue: schemes } = await readCodeLists([SHIPPED_IDENTIFIER_SCHEMES]);
  return {
    sources: [{ list: 'starter', version: starter.version }, ...schemes.sources],
    transportProfiles: starter.transportProfiles,
    processes: starter.processes,
    documentTypes: starter.documentTypes,
    identifierSchemes: schemes.identifierSchemes,
  };
}
