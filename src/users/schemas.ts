import { Type, type Static } from 'typebox';
import { AccessPointProviderIdentifiable } from '../access-point-providers/schemas.js';
import { RoleSchema } from '../http/auth.js';
import { PageQuery, PageSchema } from '../core/paging.js';
import { Nullable, Uuid } from '../core/schemas.js';
import { ServiceProviderIdentifiable } from '../service-providers/schemas.js';
import { MAX_USERNAME_LENGTH, USERNAME_PATTERN } from '../core/username.js';

const MIN_PASSWORD_LENGTH = 12;

const userFields = {
  // No look-alikes (see core/username.ts); a colon could not be sent in HTTP Basic credentials anyway.
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
