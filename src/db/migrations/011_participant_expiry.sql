-- A participant whose delete date has come is logged as expired ('expire') when the registry removes it
-- (src/changes/expiry.ts), so the SML, the Directory and the log's followers see it go.
ALTER TABLE change_log DROP CONSTRAINT change_log_operation_check;
ALTER TABLE change_log ADD CONSTRAINT change_log_operation_check
  CHECK (operation IN ('create', 'update', 'delete', 'transfer', 'expire')) NOT VALID;
ALTER TABLE change_log VALIDATE CONSTRAINT change_log_operation_check;
