import { join } from 'node:path';

/** The official Peppol code lists v9.7 in shared/ beside the project; the project never copies them. */
export const CODE_LISTS = join(import.meta.dirname, '..', '..', '..', 'shared', 'data', 'peppol-codelists-v9.7');
