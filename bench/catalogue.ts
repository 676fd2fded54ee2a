import { existsSync } from 'node:fs';
import { readCodeLists } from '../src/code-lists/codelists.js';
import { loadCatalogue as loadCodeLists } from '../src/code-lists/repository.js';
import type { Database } from '../src/db/database.js';

/** Without the code lists: the Peppol processes most participants take, with their main document type. */
const PROCESSES = [
  [
    'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
    'Peppol BIS Billing 3.0',
    'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
  ],
  [
    'urn:fdc:peppol.eu:2017:poacc:selfbilling:01:1.0',
    'Peppol BIS Self-Billing 3.0',
    'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:selfbilling:3.0::2.1',
  ],
  [
    'urn:fdc:peppol.eu:poacc:bis:ordering:3',
    'Peppol BIS Ordering 3.0',
    'urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1',
  ],
  [
    'urn:fdc:peppol.eu:poacc:bis:order_only:3',
    'Peppol BIS Order only 3.0',
    'urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order##urn:fdc:peppol.eu:poacc:trns:order:3::2.1#only',
  ],
  [
    'urn:fdc:peppol.eu:poacc:bis:despatch_advice:3',
    'Peppol BIS Despatch Advice 3.0',
    'urn:oasis:names:specification:ubl:schema:xsd:DespatchAdvice-2::DespatchAdvice##urn:fdc:peppol.eu:poacc:trns:despatch_advice:3::2.1',
  ],
  [
    'urn:fdc:peppol.eu:poacc:bis:invoice_response:3',
    'Peppol BIS Invoice Response 3.0',
    'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:fdc:peppol.eu:poacc:trns:invoice_response:3::2.1',
  ],
  [
    'urn:fdc:peppol.eu:poacc:bis:mlr:3',
    'Peppol BIS Message Level Response 3.0',
    'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:fdc:peppol.eu:poacc:trns:mlr:3::2.1',
  ],
  [
    'urn:fdc:peppol.eu:poacc:bis:catalogue_only:3',
    'Peppol BIS Catalogue only 3.0',
    'urn:oasis:names:specification:ubl:schema:xsd:Catalogue-2::Catalogue##urn:fdc:peppol.eu:poacc:trns:catalogue:3::2.1',
  ],
] as const;

/**
 * The Peppol catalogue through the project's own loader when the code lists are at `codeListDir`, else a few
 * Peppol processes and document types. Returns the ids of every process.
 */
export async function loadCatalogue(db: Database, codeListDir: string): Promise<string[]> {
  if (existsSync(codeListDir)) await loadCodeLists(db, (await readCodeLists([codeListDir])).catalogue);
  else await loadFewProcesses(db);
  return (await db.query<{ id: string }>('SELECT id FROM processes ORDER BY value')).map((row) => row.id);
}

async function loadFewProcesses(db: Database): Promise<void> {
  await db.query(
    `WITH p AS (
       INSERT INTO processes (scheme, value, domain, title, restricted, visible)
       SELECT 'cenbii-procid-ubl', value, 'POACC', title, false, true FROM unnest($1::text[], $2::text[]) AS t(value, title)
       RETURNING id, value),
     d AS (
       INSERT INTO document_types (scheme, value, title, visible)
       SELECT DISTINCT 'busdox-docid-qns', document, 'Document of ' || title, true
         FROM unnest($2::text[], $3::text[]) AS t(title, document)
       RETURNING id, value)
     INSERT INTO process_document_types (process_id, document_type_id)
     SELECT p.id, d.id FROM unnest($1::text[], $3::text[]) AS t(value, document)
       JOIN p ON p.value = t.value JOIN d ON d.value = t.document`,
    [PROCESSES.map((p) => p[0]), PROCESSES.map((p) => p[1]), PROCESSES.map((p) => p[2])],
  );
}
