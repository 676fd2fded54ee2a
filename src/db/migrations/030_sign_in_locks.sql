-- Sign-in locks (issue 32): a (username, client address) pair refused after too many failed password checks. Kept
-- here, not only in the memory of the process that made it, so that every instance and worker refuses the pair, the
-- authority reads the same list from any of them, and an ADMIN's lift holds everywhere. Each lock and each lift is
-- appended to the change log (resource `sign-in-lock`), which tells every instance (src/users/sign-in-locks.ts).
CREATE TABLE sign_in_locks (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- As the client sent it (at most 100 characters: no user has a longer name), and its ASCII case fold.
  username text NOT NULL,
  username_key text NOT NULL,
  client_address text NOT NULL,
  locked_at timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz NOT NULL,
  UNIQUE (username_key, client_address)
);
CREATE INDEX sign_in_locks_until_idx ON sign_in_locks (locked_until);
