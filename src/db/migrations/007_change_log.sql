-- The one change log: every write of the API, the command line and the catalogue loader appends its change
-- in its own transaction (src/changes/log.ts). Audit, change feed, cache invalidation and deliveries read it.
CREATE TABLE change_log (
  id bigserial PRIMARY KEY,
  -- The follower's cursor, given at commit (below): entries become visible in seq order, never out of it.
  seq bigint UNIQUE,
  resource text NOT NULL,
  identifier text NOT NULL,
  operation text NOT NULL CHECK (operation IN ('create', 'update', 'delete', 'transfer')),
  -- Who: 'api' (a request), 'cli' (the operator's command line) or 'system' (first start, demo set).
  origin text NOT NULL,
  user_id uuid,
  username text,
  role text,
  acting_provider_id uuid,
  request_id text,
  -- The service providers whose participant this is, before and after: a SERVICE_PROVIDER's audit scope.
  service_provider_ids uuid[] NOT NULL DEFAULT '{}',
  changed_at timestamptz NOT NULL DEFAULT now(),
  before jsonb,
  after jsonb
);
CREATE INDEX change_log_identifier_idx ON change_log (identifier, seq);
CREATE INDEX change_log_providers_idx ON change_log USING gin (service_provider_ids);

-- The last position handed out. Its row lock, taken at commit, serializes the numbering of committing
-- transactions: a transaction numbers its entries only once every earlier numbered one has committed.
CREATE TABLE change_log_position (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  seq bigint NOT NULL
);
INSERT INTO change_log_position (seq) VALUES (0);

CREATE FUNCTION change_log_number() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  next bigint;
BEGIN
  UPDATE change_log_position SET seq = seq + 1 RETURNING seq INTO next;
  UPDATE change_log SET seq = next WHERE id = NEW.id;
  -- One notification per transaction (equal payloads fold), delivered at commit.
  PERFORM pg_notify('registry_changes', current_schema());
  RETURN NULL;
END
$$;

-- Deferred: runs as the transaction commits, so the position lock is held only from then to the commit.
CREATE CONSTRAINT TRIGGER change_log_number AFTER INSERT ON change_log
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION change_log_number();

-- Deliveries to the SML and the Peppol Directory (src/changes/outbox.ts): a transactional outbox read from the
-- change log. One row per target: how far it has delivered, and who holds it (a lease) while delivering.
CREATE TABLE delivery_cursors (
  target text PRIMARY KEY,
  seq bigint NOT NULL,
  leased_by text,
  leased_until timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  last_error_at timestamptz
);
-- The participant identifiers the SML holds for this SMP, as far as the registry knows (reconcile checks).
CREATE TABLE sml_registrations (
  participant text PRIMARY KEY,
  registered_at timestamptz NOT NULL DEFAULT now()
);
