-- Usernames are unique by their ASCII case fold (src/users/username.ts), no longer by lower(), which follows
-- the database's locale: under C.UTF-8 it made 'admİn' (U+0130) the user 'admin'. Names that lower() took for
-- one stay one: two names the fold makes equal differ only in ASCII case, which lower() folds as well (except
-- under a Turkish locale, 'I'; there a unique violation here names the pair an operator must rename).
DROP INDEX users_username_key;
CREATE UNIQUE INDEX users_username_key ON users (lower(username COLLATE "C"));
