import { join } from 'node:path';

/** The project's reference data (see reference-data/README.md). */
export const REFERENCE_DATA = join(import.meta.dirname, '..', '..', 'reference-data');

/** The official Peppol code lists, release 9.7. */
export const CODE_LISTS = join(REFERENCE_DATA, 'peppol-codelists-v9.7');
