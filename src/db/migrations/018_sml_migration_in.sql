-- Migration in (src/changes/targets.ts): the key a provider got from the organization's previous provider,
-- waiting for the SML delivery to call Migrate with it instead of Create. Deleted once the SML has answered
-- (a wrong key is not tried again: the participant shows the refusal and the provider gives another key). The
-- key is no part of the change log: the change that makes the delivery try (operation 'migrate') logs the
-- participant only.
CREATE TABLE sml_migration_keys (
  participant text PRIMARY KEY,
  migration_key text NOT NULL,
  given_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE change_log DROP CONSTRAINT change_log_operation_check;
ALTER TABLE change_log ADD CONSTRAINT change_log_operation_check
  CHECK (operation IN ('create', 'update', 'delete', 'transfer', 'expire', 'migrate')) NOT VALID;
ALTER TABLE change_log VALIDATE CONSTRAINT change_log_operation_check;
