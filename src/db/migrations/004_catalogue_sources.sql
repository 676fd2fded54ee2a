-- The code lists the catalogue was loaded from, one row per list, with the version last loaded, so an
-- operator sees which release the catalogue follows and a first start knows the catalogue is set up.
CREATE TABLE catalogue_sources (
  list text PRIMARY KEY CHECK (list IN ('processes', 'document-types', 'transport-profiles', 'starter')),
  version text NOT NULL,
  loaded_at timestamptz NOT NULL DEFAULT now()
);
