import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ACCESS_POINT_PROVIDER_REFERENCE } from '../access-point-providers/repository.js';
import { appendChange } from '../db/change-log.js';
import { actorOf } from '../http/actor.js';
import type { Queryable } from '../db/database.js';
import {
  resolveReference,
  SERVICE_PROVIDER_REFERENCE,
  type ReferenceInput,
  type ReferenceTarget,
  type Resolved,
} from '../db/references.js';
import { lockRow } from '../db/rows.js';
import { bearerTokenOf, callerOf, Role, ROLES, type Access } from '../http/auth.js';
import { ValidationError } from '../core/errors.js';
import { pageOf, pageRequest } from '../core/paging.js';
import { UuidParams } from '../core/schemas.js';
import { hashPassword } from './password.js';
import { closeSessionsOf } from '../sessions/sessions.js';
import { passwordProblem } from './password-rules.js';
import {
  deleteUser,
  findUsers,
  getUser,
  insertUserRecord,
  keepLastAdmin,
  setPasswordHash,
  updateUser,
  USER_SORTABLE,
  USER_TIE_BREAKER,
  type UserRecord,
} from './repository.js';
import {
  AddUserForm,
  PasswordChangeForm,
  UpdateUserForm,
  User,
  UserPage,
  UserQuery,
  type UserForm,
} from './schemas.js';

const ADMINS: readonly Access[] = [Role.admin];
const FORM = 'userFormDTO';
const PASSWORD_FORM = 'passwordChangeFormDTO';

/** The provider a user acts for: required for `role`, refused for any other role. */
async function actingFor(
  tx: Queryable,
  form: UserForm,
  role: Role,
  field: 'serviceProvider' | 'accessPointProvider',
  target: ReferenceTarget,
) {
  const reference: ReferenceInput | undefined = form[field];
  const entry = { field, typeName: target.typeName };
  if (form.role !== role) {
    const errors: Resolved['errors'] =
      reference === undefined
        ? []
        : [
            {
              ...entry,
              code: 'Null',
              rejectedValue: reference,
              defaultMessage: `must be null unless the role is ${role}`,
            },
          ];
    return { id: null, errors };
  }
  if (reference === undefined) {
    return {
      id: null,
      errors: [
        { ...entry, code: 'NotNull', rejectedValue: null, defaultMessage: `must not be null for the role ${role}` },
      ],
    };
  }
  return resolveReference(tx, target, reference, field);
}

/** The form's password when passwordProblem refuses it, as a validation entry; none when it is absent. */
function passwordErrors(form: UserForm): Resolved['errors'] {
  const problem = form.password === undefined ? undefined : passwordProblem(form.password, form.username);
  return problem ? [{ field: 'password', code: 'WeakPassword', defaultMessage: problem }] : [];
}

/** The hash of an acceptable password (slow by design: outside any transaction); none for an absent or refused one. */
async function hashOf(form: UserForm, refused: Resolved['errors']): Promise<string | undefined> {
  return form.password === undefined || refused.length > 0 ? undefined : hashPassword(form.password);
}

/** The record of a valid form; every violation at once otherwise, the password's (`refused`) among them. */
async function recordOf(tx: Queryable, form: UserForm, refused: Resolved['errors']): Promise<UserRecord> {
  const [serviceProvider, accessPointProvider] = await Promise.all([
    actingFor(tx, form, Role.serviceProvider, 'serviceProvider', SERVICE_PROVIDER_REFERENCE),
    actingFor(tx, form, Role.accessPointProvider, 'accessPointProvider', ACCESS_POINT_PROVIDER_REFERENCE),
  ]);
  const errors = [...refused, ...serviceProvider.errors, ...accessPointProvider.errors];
  if (errors.length > 0) throw ValidationError.of(FORM, errors);
  return {
    username: form.username,
    role: form.role,
    serviceProviderId: serviceProvider.id,
    accessPointProviderId: accessPointProvider.id,
  };
}

/**
 * Credentials, ADMIN only, but for each user's change of its own password. Passwords are write-only and hashed before
 * the transaction opens (the hash is slow by design). A change or a delete takes effect on the very next request: the
 * credential cache hears it from the change log before the answer is sent (every instance soon after), and a check
 * that read the old row meanwhile does not cache it.
 */
const users: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      schema: { querystring: UserQuery, response: { 200: UserPage } },
      config: { access: ADMINS, mediaTypes: ['users.find'] },
    },
    async (request) => {
      const page = pageRequest(request.query, USER_SORTABLE, USER_TIE_BREAKER);
      const { total, rows } = await findUsers(app.db, page);
      return pageOf(rows, total, page);
    },
  );

  app.get(
    '/:identifier',
    {
      schema: { params: UuidParams, response: { 200: User } },
      config: { access: ADMINS, mediaTypes: ['users.get'] },
    },
    async (request) => getUser(app.db, request.params.identifier),
  );

  app.post(
    '/',
    {
      schema: { body: AddUserForm, response: { 201: User } },
      config: { access: ADMINS, mediaTypes: ['users.add'], objectName: FORM },
    },
    async (request, reply) => {
      const refused = passwordErrors(request.body);
      const passwordHash = await hashOf(request.body, refused);
      const user = await app.db.transaction(async (tx) => {
        const record = await recordOf(tx, request.body, refused);
        const after = await getUser(tx, await insertUserRecord(tx, record, passwordHash as string));
        await appendChange(tx, actorOf(request), {
          resource: 'user',
          identifier: after.identifier,
          operation: 'create',
          before: null,
          after,
        });
        return after;
      });
      return reply.status(201).send(user);
    },
  );

  app.put(
    '/:identifier',
    {
      schema: { params: UuidParams, body: UpdateUserForm, response: { 200: User } },
      config: { access: ADMINS, mediaTypes: ['users.update'], objectName: FORM },
    },
    async (request) => {
      const { identifier } = request.params;
      const refused = passwordErrors(request.body);
      const passwordHash = await hashOf(request.body, refused);
      const changed = await app.db.transaction(async (tx) => {
        await lockRow(tx, 'users', identifier);
        const before = await getUser(tx, identifier);
        const record = await recordOf(tx, request.body, refused);
        if (record.role !== Role.admin) await keepLastAdmin(tx, identifier, 'demoted');
        await updateUser(tx, identifier, record, passwordHash);
        const after = await getUser(tx, identifier);
        await appendChange(tx, actorOf(request), {
          resource: 'user',
          identifier,
          operation: 'update',
          before,
          after: { ...after, passwordChanged: passwordHash !== undefined },
        });
        return after;
      });
      if (passwordHash !== undefined)
        app.securityEvents.record(request, 'password_changed', changed.username, {
          changedBy: callerOf(request).username,
        });
      return changed;
    },
  );

  // A segment more than `/:identifier`: no user's path.
  app.put(
    '/me/password',
    {
      schema: {
        summary: 'Change your own password: the current one is checked (and throttled) as a sign-in is',
        description:
          'Answers 200 without a body (as a transfer does); the old password stops working on every instance at once (the verified credentials are ' +
          'dropped everywhere). A wrong current password counts as a failed sign-in of this username from this address.',
        body: PasswordChangeForm,
      },
      config: { access: ROLES, mediaTypes: ['users.password'], objectName: PASSWORD_FORM },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const { currentPassword, newPassword } = request.body;
      const problem =
        newPassword === currentPassword
          ? 'must differ from the current password'
          : passwordProblem(newPassword, caller.username);
      const checked = await app.credentials.checkPassword(caller.username, currentPassword, request);
      const errors: Resolved['errors'] = [
        ...(checked?.userId === caller.userId
          ? []
          : [{ field: 'currentPassword', code: 'WrongPassword', defaultMessage: 'is not your current password' }]),
        ...(problem ? [{ field: 'newPassword', code: 'WeakPassword', defaultMessage: problem }] : []),
      ];
      if (errors.length > 0) throw ValidationError.of(PASSWORD_FORM, errors);
      const passwordHash = await hashPassword(newPassword);
      await app.db.transaction(async (tx) => {
        await lockRow(tx, 'users', caller.userId);
        const before = await getUser(tx, caller.userId);
        await setPasswordHash(tx, caller.userId, passwordHash);
        // The console's session that changed it goes on; every other session of the user ends.
        await closeSessionsOf(tx, caller.userId, bearerTokenOf(request));
        await appendChange(tx, actorOf(request), {
          resource: 'user',
          identifier: caller.userId,
          operation: 'update',
          before,
          after: { ...before, passwordChanged: true },
        });
      });
      app.securityEvents.record(request, 'password_changed', caller.username);
      return reply.status(200).send();
    },
  );

  app.delete(
    '/:identifier',
    {
      schema: { params: UuidParams },
      config: { access: ADMINS, mediaTypes: ['users.delete'] },
    },
    async (request, reply) => {
      const { identifier } = request.params;
      await app.db.transaction(async (tx) => {
        const before = await getUser(tx, identifier);
        await deleteUser(tx, identifier);
        await appendChange(tx, actorOf(request), {
          resource: 'user',
          identifier,
          operation: 'delete',
          before,
          after: null,
        });
      });
      return reply.status(204).send();
    },
  );
};

export default users;
