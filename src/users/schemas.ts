import { Type, type Static } from 'typebox';
import { AccessPointProviderIdentifiable } from '../access-point-providers/schemas.js';
import { ROLES, type Role } from '../http/auth.js';
import { PageQuery, PageSchema } from '../core/paging.js';
import { Nullable, Uuid } from '../core/schemas.js';
import { ServiceProviderIdentifiable } from '../service-providers/schemas.js';
import { MAX_USERNAME_LENGTH, USERNAME_PATTERN } from './username.js';

const MIN_PASSWORD_LENGTH = 12;

const RoleSchema = Type.Unsafe<Role>({ type: 'string', enum: [...ROLES], title: 'Role' });

const userFields = {
  // No look-alikes (see username.ts); a colon could not be sent in HTTP Basic credentials anyway.
  username: Type.String({
    minLength: 1,
    maxLength: MAX_USERNAME_LENGTH,
    pattern: USERNAME_PATTERN,
    'x-constraint': 'NotEmpty',
    description: 'ASCII letters, digits and . _ @ -; unique, case-insensitively',
  }),
  role: RoleSchema,
  serviceProvider: Type.Optional(ServiceProviderIdentifiable),
  accessPointProvider: Type.Optional(AccessPointProviderIdentifiable),
};
const MAX_PASSWORD_LENGTH = 1024;
const Password = Type.String({
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: MAX_PASSWORD_LENGTH,
  writeOnly: true,
  description: `at least ${MIN_PASSWORD_LENGTH} characters, not the username, not one character repeated, not a common password; never returned`,
});

/** A new user: `serviceProvider` for the role SERVICE_PROVIDER, `accessPointProvider` for ACCESS_POINT_PROVIDER. */
export const AddUserForm = Type.Object({ ...userFields, password: Password }, { title: 'AddUserForm' });
/** A changed user; without `password` the password stays as it is. */
export const UpdateUserForm = Type.Object(
  { ...userFields, password: Type.Optional(Password) },
  { title: 'UpdateUserForm' },
);
export type UserForm = Static<typeof UpdateUserForm>;

const Summary = (title: string) => Nullable(Type.Object({ identifier: Uuid(), title: Type.String() }, { title }));

export const User = Type.Object(
  {
    identifier: Uuid(),
    username: Type.String(),
    role: Type.String(),
    serviceProvider: Summary('ServiceProviderSummary'),
    accessPointProvider: Summary('AccessPointProviderSummary'),
  },
  { title: 'User' },
);
export type User = Static<typeof User>;

export const UserPage = PageSchema(User, 'UserPage');
export const UserQuery = Type.Object(PageQuery);

/** A user's change of its own password: the current one, checked (and throttled) as a sign-in is, and the new one. */
export const PasswordChangeForm = Type.Object(
  {
    currentPassword: Type.String({
      minLength: 1,
      maxLength: MAX_PASSWORD_LENGTH,
      writeOnly: true,
      'x-constraint': 'NotEmpty',
      description: 'the password in use now',
    }),
    newPassword: Password,
  },
  { title: 'PasswordChangeForm' },
);
export type PasswordChangeForm = Static<typeof PasswordChangeForm>;

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

/** Who is signed in: the user of the credentials or session of the request. */
export const CurrentSession = Type.Object(
  {
    username: Type.String(),
    role: RoleSchema,
    expiresAt: Nullable(
      Type.String({
        format: 'date-time',
        description:
          'when the session ends at the latest (an idle half hour ends it sooner); null for Basic credentials',
      }),
    ),
  },
  { title: 'CurrentSession' },
);

export const OpenedSession = Type.Object(
  {
    ...CurrentSession.properties,
    token: Type.String({
      description:
        'sent as `Authorization: Bearer <token>`; shown this once, stored by the service only as its SHA-256',
    }),
  },
  { title: 'OpenedSession' },
);
