-- Participant search at a million rows. `query` matches a case-insensitive part of the name (a trigram
-- index on lower(name) serves LIKE '%...%') or the start of the organization identifier (a btree with
-- text_pattern_ops serves LIKE '...%' in any collation). The date filters and the common sorts end in
-- the identifier, the tie-breaker of every order, so a page can be read from the index in order.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX participants_name_trgm_idx ON participants USING gin (lower(name) gin_trgm_ops);
CREATE INDEX participants_organization_prefix_idx ON participants (organization_identifier text_pattern_ops);

-- Replaces the single-column index of 001: the same filter, plus paging in (date, id) order.
DROP INDEX IF EXISTS participants_last_modification_idx;
CREATE INDEX participants_last_modification_idx ON participants (last_modification_date, id);
CREATE INDEX participants_registration_idx ON participants (registration_date, id);
CREATE INDEX participants_qualified_value_idx ON participants ((icd || ':' || organization_identifier), id);
CREATE INDEX participants_name_idx ON participants (name, id);
-- A provider's own participants in identifier order: the default order of a service provider's search.
CREATE INDEX participants_provider_order_idx ON participants (service_provider_id, id);
DROP INDEX IF EXISTS participants_service_provider_idx;
-- Expired participants are few; this finds them for clean-up without scanning the table.
CREATE INDEX participants_delete_date_idx ON participants (delete_date) WHERE delete_date IS NOT NULL;
