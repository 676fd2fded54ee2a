-- Each participant's place in the network (src/changes/targets.ts). `sml_registrations` knew only what the SML
-- held for this SMP; a refusal no retry can cure (the organization held by another SMP, an identifier the SML
-- rejects) held the SML cursor for ever. Now each such refusal is recorded here, per participant, and the cursor
-- goes on; the state shows in the API and the console, and the participant's next change (or sml-reconcile)
-- tries again.
CREATE TABLE sml_participants (
  participant text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('registered', 'held_elsewhere', 'refused')),
  since timestamptz NOT NULL DEFAULT now(),
  -- The SML's refusal: the WSDL's fault element, BDMSL's ERR code, its message.
  error_fault text,
  error_code text,
  error_message text,
  checked_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO sml_participants (participant, state, since) SELECT participant, 'registered', registered_at FROM sml_registrations;
DROP TABLE sml_registrations;
-- The deliveries page lists the participants stuck in each state, oldest first.
CREATE INDEX sml_participants_stuck ON sml_participants (state, since) WHERE state <> 'registered';

-- What the Directory target pushed: it deletes only what it pushed, never the entry of an organization another
-- SMP holds. Every participant the Directory cursor passed counts as pushed (a Delete of one it lacks is a 404,
-- which counts as deleted).
CREATE TABLE directory_participants (
  participant text PRIMARY KEY,
  pushed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO directory_participants (participant)
SELECT DISTINCT c.identifier FROM change_log c JOIN delivery_cursors d ON d.target = 'directory'
 WHERE c.resource = 'participant' AND c.seq <= d.seq;
