-- The Peppol "Participant Identifier Schemes" code list as last loaded (`registry load-catalogue`, the first start):
-- one row per ICD, never deleted (a later release marks an entry removed, it does not drop it). With rows here the
-- accepted ICDs follow them, each at its removal date; with none, the specification's list stands
-- (docs/design/participants.md, "Identifiers"). Written with a change-log entry
-- (resource `identifier-scheme`), which tells every instance's catalogue cache.
CREATE TABLE identifier_schemes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  icd text NOT NULL UNIQUE CHECK (icd ~ '^[0-9]{4}$'),
  scheme_id text,
  scheme_name text NOT NULL,
  country text,
  issuing_agency text,
  state text NOT NULL CHECK (state IN ('active', 'deprecated', 'removed')),
  removal_date date,
  registrable boolean NOT NULL DEFAULT true,
  structure text,
  validation_rules text,
  examples text[] NOT NULL DEFAULT '{}'
);

ALTER TABLE catalogue_sources DROP CONSTRAINT catalogue_sources_list_check;
ALTER TABLE catalogue_sources ADD CONSTRAINT catalogue_sources_list_check
  CHECK (list IN ('processes', 'document-types', 'transport-profiles', 'participant-identifier-schemes', 'starter'));
