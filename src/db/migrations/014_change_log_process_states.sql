-- A participant's state in the change log names its processes by the hash of their state (`processStates`) rather
-- than carrying each process as the API shows it (some 11 kB with its document types): every distinct process state
-- is kept once here, and `change_log_state` puts the processes back, as they were, where the log is read.
-- No unique key on the hash: a write never waits for another transaction that stores the same state; the
-- rare copy two concurrent writes store is harmless (the reader takes one).
CREATE TABLE change_log_process_states (
  hash text NOT NULL,
  state jsonb NOT NULL
);
CREATE INDEX change_log_process_states_hash_idx ON change_log_process_states (hash);

-- A change-log state as the API shows it: `processStates` (hashes) turned back into `processes` (states), in order.
CREATE FUNCTION change_log_state(state jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN state ? 'processStates'
    THEN (state - 'processStates') || jsonb_build_object('processes', (
      SELECT coalesce(jsonb_agg((SELECT s.state FROM change_log_process_states s WHERE s.hash = h.hash LIMIT 1)
                                ORDER BY h.position), '[]'::jsonb)
        FROM jsonb_array_elements_text(state->'processStates') WITH ORDINALITY AS h(hash, position)))
    ELSE state END
$$;

-- Numbering at commit (migration 007) one UPDATE per entry cost a bulk import's batch of 2,000 entries a third of
-- its time. The transaction's first numbering trigger now numbers all its entries, in insertion order, with one
-- UPDATE, under the same lock of the position row; the others find the work done. The entries not yet numbered
-- that a transaction can see are its own (every committed entry has its number), found by the partial index.
CREATE INDEX change_log_unnumbered_idx ON change_log (id) WHERE seq IS NULL;

CREATE OR REPLACE FUNCTION change_log_number() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  first bigint;
  numbered bigint;
BEGIN
  IF current_setting('registry.change_log_numbered', true) = txid_current()::text THEN
    RETURN NULL;
  END IF;
  SELECT seq INTO first FROM change_log_position FOR UPDATE;
  UPDATE change_log c SET seq = first + n.position
    FROM (SELECT id, row_number() OVER (ORDER BY id) AS position FROM change_log WHERE seq IS NULL) n
   WHERE c.id = n.id;
  GET DIAGNOSTICS numbered = ROW_COUNT;
  UPDATE change_log_position SET seq = seq + numbered;
  PERFORM set_config('registry.change_log_numbered', txid_current()::text, true);
  -- One notification per transaction (equal payloads fold), delivered at commit.
  PERFORM pg_notify('registry_changes', current_schema());
  RETURN NULL;
END
$$;
