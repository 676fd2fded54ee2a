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
