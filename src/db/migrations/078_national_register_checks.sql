-- Norwegian organizations against Enhetsregisteret (issue 50, item 4; src/national-register/). One row per
-- organization number (ICD 0192, the participants' `organization_identifier`) the registry has asked the register
-- about, or means to: what the register last said, and when to ask again. A `state` other than `known` is a flag its
-- providers and the authority see; raising, changing and clearing one is appended to the change log (resource
-- `register-flag`). The bookkeeping (`checked_at`, `due_at`) is not: it is the re-check's, as a delivery cursor is
-- the outbox's.
CREATE TABLE national_register_checks (
  organization_identifier text PRIMARY KEY,
  -- NULL: never asked (an organization registered before the register was configured); `unconfirmed`: registered while
  -- the register did not answer; `unknown`: the register has no such unit; `deleted`: it has deleted (or removed) it.
  state text CHECK (state IN ('known', 'unconfirmed', 'unknown', 'deleted')),
  -- The register's `slettedato`, when it gave one.
  deleted_on date,
  state_since timestamptz NOT NULL DEFAULT now(),
  -- The register's last answer; NULL: it has never answered for this organization.
  checked_at timestamptz,
  -- When the re-check asks next; NULL: as soon as it can.
  due_at timestamptz
);
CREATE INDEX national_register_checks_due_idx ON national_register_checks (due_at NULLS FIRST);
CREATE INDEX national_register_checks_flagged_idx ON national_register_checks (organization_identifier) WHERE state <> 'known';

-- The re-check runs on one instance at a time, whoever holds this lease: the register is asked at the configured rate
-- however many instances share the database.
CREATE TABLE national_register_recheck (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  leased_by uuid,
  leased_until timestamptz
);
INSERT INTO national_register_recheck DEFAULT VALUES;
