import { Type } from 'typebox';
import { Nullable } from '../core/schemas.js';
import { RoleSchema } from '../http/auth.js';

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
