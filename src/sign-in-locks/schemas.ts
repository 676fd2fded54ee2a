import { Type, type Static } from 'typebox';
import { PageQuery, PageSchema } from '../core/paging.js';
import { Nullable, Uuid } from '../core/schemas.js';
import { MAX_USERNAME_LENGTH } from '../core/username.js';

const Instant = (description: string) => Type.String({ format: 'date-time', description });

/** A sign-in lock in force: the pair refused, and until when. */
export const SignInLockView = Type.Object(
  {
    identifier: Uuid({ description: 'the lock, to lift it' }),
    username: Nullable(
      Type.String({
        // The setting's old name (now SIGN_IN_MAX_LOCKS_PER_ADDRESS, which it is still an alias of): the description
        // stays as published.
        description:
          'as the client sent it (locks are kept for unknown usernames too); null: every username from the address, ' +
          'locked as a whole once it held LOGIN_MAX_LOCKS_PER_ADDRESS locks of others',
      }),
    ),
    clientAddress: Type.String({
      description: 'the client address the username is refused from (see REGISTRY_TRUSTED_PROXIES)',
    }),
    lockedAt: Instant('when the lock began'),
    lockedUntil: Instant('when it ends unless an ADMIN lifts it earlier'),
  },
  { title: 'SignInLock' },
);
export type SignInLockView = Static<typeof SignInLockView>;

export const SignInLockPage = PageSchema(SignInLockView, 'SignInLockPage');
export const SignInLockQuery = Type.Object({
  ...PageQuery,
  username: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_USERNAME_LENGTH,
      description: 'only the locks of this username (any letter case)',
    }),
  ),
});
