-- A write's change log entry is now sent without waiting for its answer, and its transaction's COMMIT right behind
-- it (src/db/database.ts, `sentAhead`): the writer no longer reads the count of missing process states before it
-- commits. An entry naming a process state the database lacks (another database, or a failover that lost it) now
-- fails its statement, so the transaction rolls back with the code RG001 and is run again with every state sent.
CREATE FUNCTION change_log_states_required(missing bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  IF missing > 0 THEN
    RAISE EXCEPTION 'change log entry names % process states the database lacks', missing USING ERRCODE = 'RG001';
  END IF;
  RETURN missing;
END
$$;
