-- Migration out (src/changes/migration-out.ts): the organization's provider asked for a migration key and the SML
-- took it (PrepareToMigrate). It is served as usual until the SML's List no longer shows it under this SMP's ID
-- (sml-reconcile checks); then its participants end, logged as 'migrate'. The key itself is kept nowhere: it is
-- shown to the provider once, and withdrawing it registers another key no one is shown.
ALTER TABLE sml_participants DROP CONSTRAINT sml_participants_state_check;
ALTER TABLE sml_participants ADD CONSTRAINT sml_participants_state_check
  CHECK (state IN ('registered', 'held_elsewhere', 'refused', 'migrating_out'));
