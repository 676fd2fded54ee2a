-- Numbering after commit. Entries were numbered at commit (migrations 007, 014) under the lock of the position
-- row, held through the commit's WAL flush: commits that wrote entries flushed one after another and could not share
-- a flush, which capped writes at some 300 a second on a 2-core machine whatever else they did. Now a write only
-- inserts its entries (seq NULL); `change_log_sequence()`, run after the commit by the writer (and by every
-- instance's change signal, which also covers a writer that died in between), numbers every committed entry not yet
-- numbered, in insertion order, in one short transaction of its own. Runs are serialized by an advisory lock (per
-- schema), and each of their statements reads what committed before it, so positions stay dense and are handed out
-- in the order entries became visible: a follower that read everything up to N never later sees a new entry at N or
-- below. Concurrent writers' entries are numbered by one run, sharing its flush; a run with nothing to number
-- writes nothing. The NOTIFY now comes from the run that numbered, since that is when followers can read.
DROP TRIGGER change_log_number ON change_log;
DROP FUNCTION change_log_number();

CREATE FUNCTION change_log_sequence() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  first bigint;
  numbered bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(current_schema() || '.change_log_sequence'));
  SELECT seq INTO first FROM change_log_position;
  UPDATE change_log c SET seq = first + n.position
    FROM (SELECT id, row_number() OVER (ORDER BY id) AS position FROM change_log WHERE seq IS NULL) n
   WHERE c.id = n.id;
  GET DIAGNOSTICS numbered = ROW_COUNT;
  IF numbered > 0 THEN
    UPDATE change_log_position SET seq = first + numbered;
    PERFORM pg_notify('registry_changes', current_schema());
  END IF;
  RETURN numbered;
END
$$;
