import { Type, type Static } from 'typebox';
import { AccessPointProviderIdentifiable } from '../access-point-providers/schemas.js';
import { ROLES, type Role } from '../http/auth.js';
import { PageQuery, PageSchema } from '../core/paging.js';
import { Nullable, Uuid } from '../core/schemas.js';
import { ServiceProviderIdentifiable } from '../service-providers/schemas.js';
import { USERNAME_PATTERN } from './username.js';

const MIN_PASSWORD_LENGTH = 12;

const RoleSchema = Type.Unsafe<Role>({ type: 'string', enum: [...ROLES], title: 'Role' });

const userFields = {
  // No look-alikes (see username.ts); a colon could not be sent in HTTP Basic credentials anyway.
  username: Type.String({
    minLength: 1, maxLength: 100, pattern: USERNAME_PATTERN, 'x-constraint': 'NotEmpty',
    description: 'ASCII letters, digits and . _ @ -; unique, case-insensitively',
  }),
  role: RoleSchema,
  serviceProvider: Type.Optional(ServiceProviderIdentifiable),
  accessPointProvider: Type.Optional(AccessPointProviderIdentifiable),
};
const Password = Type.String({
  minLength: MIN_PASSWORD_LENGTH, maxLength: 1024, writeOnly: true,
  description: `at least ${MIN_PASSWORD_LENGTH} characters, not the username, not one character repeated, not a common password; never returned`,
});

/** A new user: `serviceProvider` for the role SERVICE_PROVIDER, `accessPointProvider` for ACCESS_POINT_PROVIDER. */
export const AddUserForm = Type.Object({ ...userFields, password: Password }, { title: 'AddUserForm' });
/** A changed user; without `password` the password stays as it is. */
export const UpdateUserForm = Type.Object({ ...userFields, password: Type.Optional(Password) }, { title: 'UpdateUserForm' });
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

/** Who is signed in: the user of the credentials or session of the request. */
export const CurrentSession = Type.Object({
  username: Type.String(),
  role: RoleSchema,
  expiresAt: Nullable(Type.String({ format: 'date-time', description: 'when the session ends at the latest (an idle half hour ends it sooner); null for Basic credentials' })),
}, { title: 'CurrentSession' });

export const OpenedSession = Type.Object({
  ...CurrentSession.properties,
  token: Type.String({ description: 'sent as `Authorization: Bearer <token>`; shown this once, stored by the service only as its SHA-256' }),
}, { title: 'OpenedSession' });
