-- The change feed's cursors are sealed with this key (issue 47), so that the cursor a service provider is given
-- tells it nothing of the registry's other changes (the log's position is every provider's count of changes). One
-- key for every instance, replicated to the standbys and kept by backups: a cursor goes on at any instance, after a
-- restart and after a failover. 244 random bits (two version 4 UUIDs, PostgreSQL's strong random source) hashed
-- into the 32 bytes of an AES-256 key.
CREATE TABLE registry_keys (
  name text PRIMARY KEY,
  key bytea NOT NULL
);
INSERT INTO registry_keys (name, key)
VALUES ('change-feed-cursor', sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')));
