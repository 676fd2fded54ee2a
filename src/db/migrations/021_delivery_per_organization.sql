-- Deliveries keep order per organization, not for the whole country (src/changes/outbox.ts, issue 29). An
-- organization whose delivery to a target keeps failing (while the target answers the others) is set aside here
-- with its later changes and retried with back-off; the cursor goes on for everyone else. Delivery is state-based,
-- so a retry makes the target agree with the organization's state of the moment, whatever changed meanwhile.
-- `waiting_for`: the target this one waits for (the Directory for the SML) while that one has it set aside; such a
-- row is not a failure and is tried once the other target is done with it.
CREATE TABLE delivery_set_aside (
  target text NOT NULL,
  participant text NOT NULL,
  since timestamptz NOT NULL DEFAULT now(),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  last_error_at timestamptz,
  waiting_for text,
  PRIMARY KEY (target, participant)
);
CREATE INDEX delivery_set_aside_due ON delivery_set_aside (target, next_attempt_at);

-- A cursor held because the peer failed for everyone waits for its back-off, or for the first change after
-- `probe_horizon` (the log position when it last failed with no other organization to try the peer with).
ALTER TABLE delivery_cursors ADD COLUMN probe_horizon bigint;

-- The Directory's refusals no retry can cure (a 4xx other than 408 and 429), per organization: recorded, shown,
-- and tried again on the organization's next change.
CREATE TABLE directory_refusals (
  participant text PRIMARY KEY,
  status integer NOT NULL,
  message text NOT NULL,
  refused_at timestamptz NOT NULL DEFAULT now()
);
