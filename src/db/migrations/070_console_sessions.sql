-- Sign-ins of the web console that outlive a reload of its tab (issue 32): a random token the browser keeps in the
-- tab's sessionStorage, stored here only as its SHA-256. Ended by sign-out, by 30 minutes unused, 8 hours after it
-- began, by a new password, and with the user.
CREATE TABLE console_sessions (
  token_hash text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_user ON console_sessions (user_id, created_at);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
