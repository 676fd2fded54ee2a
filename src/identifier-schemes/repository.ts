import type { Queryable } from '../db/database.js';
import { IdentifierSchemeList, type IdentifierScheme } from './schemes.js';

/** The columns of `identifier_schemes` as an IdentifierScheme (migration 074). */
export const IDENTIFIER_SCHEME_COLUMNS = `icd, scheme_id AS "schemeId", scheme_name AS "schemeName", country,
  issuing_agency AS "issuingAgency", state, to_char(removal_date, 'YYYY-MM-DD') AS "removalDate", registrable, structure,
  validation_rules AS "validationRules", examples`;

/** Every identifier scheme loaded, in ICD order. */
export const readIdentifierSchemes = (db: Queryable): Promise<IdentifierScheme[]> =>
  db.query<IdentifierScheme>(`SELECT ${IDENTIFIER_SCHEME_COLUMNS} FROM identifier_schemes ORDER BY icd`);

/** Where the accepted ICDs are read from: the catalogue cache, which follows the change log, or the database. */
export interface HeldIdentifierSchemes {
  /** The list as loaded; `db`: the transaction asking, which the cache loads through when it must. */
  identifierSchemes(db?: Queryable): Promise<IdentifierSchemeList>;
}

/** The list read in `db` itself: for callers without the catalogue cache (the command line, the demo set). */
export const identifierSchemesFromDatabase = (db: Queryable): HeldIdentifierSchemes => ({
  identifierSchemes: async () => new IdentifierSchemeList(await readIdentifierSchemes(db)),
});
