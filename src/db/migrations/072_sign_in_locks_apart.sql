-- Sign-in locks are state, not history (issue 47, item 4). One anonymous address guessing new usernames made one lock
-- and one change log entry per username, kept for ever with the guessed name and the address, each waking every
-- instance's change feed polls. Now a lock is in this table while it is in force and no longer (every instance drops
-- the ended ones), it reaches the other instances by a notification of its own (channel `registry_sign_in_locks`,
-- src/users/sign-in-locks.ts), and the change log keeps only an ADMIN's lift, an authenticated act. An address that
-- holds LOGIN_MAX_LOCKS_PER_ADDRESS locks of other usernames is locked as a whole: one row, with no username.
-- Every statement here may run again (a test does, on entries it made).
ALTER TABLE sign_in_locks ALTER COLUMN username DROP NOT NULL, ALTER COLUMN username_key DROP NOT NULL;
ALTER TABLE sign_in_locks DROP CONSTRAINT IF EXISTS sign_in_locks_username_with_key;
ALTER TABLE sign_in_locks ADD CONSTRAINT sign_in_locks_username_with_key CHECK ((username IS NULL) = (username_key IS NULL));
-- One lock of a whole address at most; and the locks of one address are counted at each store.
CREATE UNIQUE INDEX IF NOT EXISTS sign_in_locks_address_whole_idx ON sign_in_locks (client_address) WHERE username_key IS NULL;
CREATE INDEX IF NOT EXISTS sign_in_locks_address_idx ON sign_in_locks (client_address);

-- The entries of locks made before: what they said of the guesser (the username it sent, its address) goes; the lock's
-- id and times stay, so positions stay dense and the feed's cursors hold. Lifts keep what they lifted: an ADMIN did it.
UPDATE change_log SET after = after - 'username' - 'clientAddress'
 WHERE resource = 'sign-in-lock' AND operation = 'create' AND (after ? 'username' OR after ? 'clientAddress');
