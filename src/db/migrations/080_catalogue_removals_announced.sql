-- At a removal instant of processes or document types (079) one instance logs a 'withdraw' of each organization whose
-- live participants lose something then (src/changes/removals.ts): the SML and Directory deliveries look at the
-- organization again (deleted when nothing publishable is left), and its provider's change feed shows it. This table
-- says which instants were announced, so that several instances, or a restart, announce each once.
CREATE TABLE catalogue_removals_announced (
  removed_from timestamptz PRIMARY KEY,
  announced_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE change_log DROP CONSTRAINT change_log_operation_check;
ALTER TABLE change_log ADD CONSTRAINT change_log_operation_check
  CHECK (operation IN ('create', 'update', 'delete', 'transfer', 'expire', 'migrate', 'withdraw')) NOT VALID;
ALTER TABLE change_log VALIDATE CONSTRAINT change_log_operation_check;
