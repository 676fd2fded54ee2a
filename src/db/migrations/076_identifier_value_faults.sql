-- Organization identifiers checked by their scheme's rule (docs/design/participants.md,
-- "Identifiers"). A registration is checked as it is made: refused when its value breaks the rule, or, with
-- IDENTIFIER_VALUE_CHECKS=false, stored with what is wrong with it (identifier_fault). The participants registered
-- before this migration are marked unchecked; the service checks them in batches after its start
-- (participants/identifier-faults.ts), recording each one's fault and never changing the participant. Rows inserted by
-- other means than the service's writes count as unchecked too: only the service's writes say they were checked.
ALTER TABLE participants ADD COLUMN identifier_checked boolean NOT NULL DEFAULT false;
ALTER TABLE participants ADD COLUMN identifier_fault text;
-- Empty once every participant is checked: the start-up check finds the rest through it.
CREATE INDEX participants_identifier_unchecked_idx ON participants (id) WHERE NOT identifier_checked;
-- The faulty ones, listed per provider and counted in the status.
CREATE INDEX participants_identifier_fault_idx ON participants (service_provider_id, id) WHERE identifier_fault IS NOT NULL;
