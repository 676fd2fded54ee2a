-- Since when an organization can receive a process: when the process was given to its participant (a row is
-- inserted when a process is added and deleted when it is removed, so the time stays while the process does).
-- Rows from before this column get their participant's last modification date: the participant had the
-- process by then at the latest, so "since" never claims more than is known.
ALTER TABLE participant_processes ADD COLUMN added_at timestamptz;
UPDATE participant_processes pp SET added_at = pa.last_modification_date::timestamp AT TIME ZONE 'UTC'
  FROM participants pa WHERE pa.id = pp.participant_id;
ALTER TABLE participant_processes ALTER COLUMN added_at SET DEFAULT now(), ALTER COLUMN added_at SET NOT NULL;
