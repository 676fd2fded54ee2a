import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { ensureAdmin, FirstAdminError } from '../../src/users/bootstrap.js';
import { credentialVerifier } from '../../src/users/credentials.js';
import { basic, type TestUser } from '../helpers/app.js';
import {
  expectMediaTypes,
  expectRefused,
  expectStatus,
  UNKNOWN,
  useAdministrationApp,
} from '../helpers/administration.js';
import { unique } from '../helpers/requests.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { openTestDatabase } from '../helpers/database.js';

/** What the credentials read of a request: its client address. */
const LOOPBACK = { ip: '127.0.0.1' } as never;

const { t, http, BASE, FORM } = useAdministrationApp({ path: '/rest/api/users', form: 'userFormDTO' });

const PASSWORD = 'correct horse battery';

interface Account extends TestUser {
  identifier: string;
  [key: string]: unknown;
}

/** Adds a user through the API and returns it with credentials ready to use. */
async function addUser(form: Record<string, unknown> = {}): Promise<Account> {
  const username = unique('user');
  const created = expectStatus(
    await http.send('POST', BASE, { username, password: PASSWORD, role: 'REGISTRY_AUTHORITY', ...form }),
    201,
  );
  const password = (form.password as string | undefined) ?? PASSWORD;
  return { ...created, password, authorization: basic(created.username, password) };
}

const serviceProviderUser = () =>
  addUser({ role: 'SERVICE_PROVIDER', serviceProvider: { identifier: t.fixture.serviceProviderId } });
/** A request that any registered role may make. */
const probe = (user: TestUser) => http.get('/rest/api/accessPoints', user);
const signsIn = async (username: string, password: string) =>
  (await probe({ username, password, authorization: basic(username, password) })).statusCode === 200;

describe('add and get', () => {
  it('adds a service provider user who can then sign in; the password is never returned', async () => {
    const response = await http.send('POST', BASE, {
      username: 'Invoicing-Bot',
      password: PASSWORD,
      role: 'SERVICE_PROVIDER',
      serviceProvider: { identifier: t.fixture.serviceProviderId },
    });
    const created = expectStatus(response, 201);
    expect(created).toEqual({
      identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
      username: 'Invoicing-Bot',
      role: 'SERVICE_PROVIDER',
      serviceProvider: { identifier: t.fixture.serviceProviderId, title: 'Provider One' },
      accessPointProvider: null,
    });
    expect(response.body).not.toContain(PASSWORD);
    expect(expectStatus(await http.get(`${BASE}/${created.identifier}`), 200)).toEqual(created);
    expectStatus(
      await probe({ username: 'invoicing-bot', password: PASSWORD, authorization: basic('invoicing-bot', PASSWORD) }),
      200,
    );
    const [stored] = await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [
      created.identifier,
    ]);
    expect(stored?.password_hash).toMatch(/^scrypt\$/);
  });

  it('adds an access point provider user and an authority', async () => {
    const apUser = await addUser({
      role: 'ACCESS_POINT_PROVIDER',
      accessPointProvider: { identifier: t.fixture.accessPointProviderId },
    });
    expect(apUser.accessPointProvider).toEqual({
      identifier: t.fixture.accessPointProviderId,
      title: 'Test AP Provider',
    });
    expect(apUser.serviceProvider).toBeNull();
    const authority = await addUser();
    expect(authority).toMatchObject({ role: 'REGISTRY_AUTHORITY', serviceProvider: null, accessPointProvider: null });
    expectStatus(await http.send('POST', '/rest/api/capabilities', { title: 'By the new authority' }, authority), 201);
  });

  it('refuses a user name that exists in any letter case with 409', async () => {
    const body = expectErrorBody(
      await http.send('POST', BASE, { username: 'ADMIN', password: PASSWORD, role: 'ADMIN' }),
      409,
    );
    expect(body.message).toBe("A user named 'ADMIN' already exists (user names are case-insensitive)");
    const other = await addUser();
    const renamed = await http.send('PUT', `${BASE}/${other.identifier}`, {
      username: 'Provider-One',
      role: 'REGISTRY_AUTHORITY',
    });
    expectErrorBody(renamed, 409, "A user named 'Provider-One' already exists (user names are case-insensitive)");
  });
});

describe('validation', () => {
  it('reports every violation of the form at once', async () => {
    const body = expectErrorBody(
      await http.send('POST', BASE, { username: 'has space', password: 'too short', role: 'ROOT' }),
      400,
    );
    expect(body.message).toBe(`Validation failed for object='${FORM}'. Error count: 3`);
    expectFieldError(body, FORM, 'username', 'Pattern');
    expect(expectFieldError(body, FORM, 'password', 'Size').arguments).toHaveLength(3);
    expectFieldError(body, FORM, 'role', 'OneOf');
    expect(JSON.stringify(body)).not.toContain('"too short"');
  });

  it('requires username, password and role on add, but no password on update', async () => {
    const body = expectErrorBody(
      await http.send('POST', BASE, {}),
      400,
      `Validation failed for object='${FORM}'. Error count: 3`,
    );
    for (const field of ['password', 'role']) expectFieldError(body, FORM, field, 'NotNull');
    expectFieldError(body, FORM, 'username', 'NotEmpty');
    const user = await addUser();
    const kept = expectStatus(
      await http.send('PUT', `${BASE}/${user.identifier}`, { username: user.username, role: 'REGISTRY_AUTHORITY' }),
      200,
    );
    expect(kept.username).toBe(user.username);
    expectStatus(await probe(user), 200);
  });

  it('refuses a colon in a user name, which HTTP Basic cannot carry', async () => {
    const body = expectErrorBody(
      await http.send('POST', BASE, { username: 'a:b', password: PASSWORD, role: 'ADMIN' }),
      400,
    );
    expectFieldError(body, FORM, 'username', 'Pattern');
  });

  it('refuses user names with characters that can pass for others, and does not sign them in as the name they imitate', async () => {
    for (const username of ['admİn', 'аdmin', 'ａｄｍｉｎ', 'jürgen']) {
      const body = expectErrorBody(await http.send('POST', BASE, { username, password: PASSWORD, role: 'ADMIN' }), 400);
      expectFieldError(body, FORM, 'username', 'Pattern');
    }
    // U+0130 (dotted capital I): PostgreSQL's lower() made it 'admin'.
    const lookalike = await t.app.inject({
      url: '/rest/api/participants',
      headers: { authorization: basic('admİn', t.users.admin.password) },
    });
    expectErrorBody(lookalike, 401, 'Bad credentials');
    expectStatus(await probe({ ...t.users.admin, authorization: basic('ADMIN', t.users.admin.password) }), 200);
  });

  it('refuses the username as password, one character repeated and the commonest passwords, on add and on update', async () => {
    const refusals = [
      { username: 'long-username-1', password: 'LONG-USERNAME-1', message: 'must not be the username' },
      { username: unique('u'), password: 'zzzzzzzzzzzzzz', message: 'must not be one character repeated' },
      { username: unique('u'), password: 'password1234', message: 'is one of the commonest passwords; choose another' },
    ];
    for (const { username, password, message } of refusals) {
      const body = expectErrorBody(await http.send('POST', BASE, { username, password, role: 'ADMIN' }), 400);
      expectFieldError(body, FORM, 'password', 'WeakPassword', message);
      expect(JSON.stringify(body)).not.toContain(password);
      expect(await signsIn(username, password)).toBe(false);
    }
    const user = await addUser();
    const body = expectErrorBody(
      await http.send('PUT', `${BASE}/${user.identifier}`, {
        username: user.username,
        password: 'qwertyuiop123',
        role: 'REGISTRY_AUTHORITY',
        serviceProvider: { identifier: t.fixture.serviceProviderId },
      }),
      400,
      `Validation failed for object='${FORM}'. Error count: 2`,
    );
    expectFieldError(body, FORM, 'password', 'WeakPassword');
    expectFieldError(body, FORM, 'serviceProvider', 'Null');
    expectStatus(await probe(user), 200);
  });

  it('requires the provider of the role, and refuses one given for another role', async () => {
    const missing = expectErrorBody(
      await http.send('POST', BASE, { username: unique('u'), password: PASSWORD, role: 'SERVICE_PROVIDER' }),
      400,
    );
    expectFieldError(missing, FORM, 'serviceProvider', 'NotNull', 'must not be null for the role SERVICE_PROVIDER');

    const wrong = expectErrorBody(
      await http.send('POST', BASE, {
        username: unique('u'),
        password: PASSWORD,
        role: 'ACCESS_POINT_PROVIDER',
        serviceProvider: { identifier: t.fixture.serviceProviderId },
      }),
      400,
      `Validation failed for object='${FORM}'. Error count: 2`,
    );
    expectFieldError(wrong, FORM, 'serviceProvider', 'Null', 'must be null unless the role is SERVICE_PROVIDER');
    expectFieldError(wrong, FORM, 'accessPointProvider', 'NotNull');

    const admin = expectErrorBody(
      await http.send('POST', BASE, {
        username: unique('u'),
        password: PASSWORD,
        role: 'ADMIN',
        accessPointProvider: { identifier: t.fixture.accessPointProviderId },
      }),
      400,
    );
    expectFieldError(admin, FORM, 'accessPointProvider', 'Null');
  });

  it('refuses an unknown provider', async () => {
    const sp = expectErrorBody(
      await http.send('POST', BASE, {
        username: unique('u'),
        password: PASSWORD,
        role: 'SERVICE_PROVIDER',
        serviceProvider: { identifier: UNKNOWN },
      }),
      400,
    );
    expectFieldError(sp, FORM, 'serviceProvider', 'NotFound', `no service provider with identifier '${UNKNOWN}'`);
    const user = await addUser();
    const app = expectErrorBody(
      await http.send('PUT', `${BASE}/${user.identifier}`, {
        username: user.username,
        role: 'ACCESS_POINT_PROVIDER',
        accessPointProvider: { identifier: UNKNOWN },
      }),
      400,
    );
    expectFieldError(
      app,
      FORM,
      'accessPointProvider',
      'NotFound',
      `no access point provider with identifier '${UNKNOWN}'`,
    );
  });
});

describe('changes take effect on the very next request', () => {
  it('refuses the old password right after a password change, and accepts the new one', async () => {
    const user = await serviceProviderUser();
    expectStatus(await probe(user), 200);
    const newPassword = 'a brand new passphrase';
    expectStatus(
      await http.send('PUT', `${BASE}/${user.identifier}`, {
        username: user.username,
        password: newPassword,
        role: 'SERVICE_PROVIDER',
        serviceProvider: { identifier: t.fixture.serviceProviderId },
      }),
      200,
    );
    expectErrorBody(await probe(user), 401, 'Bad credentials');
    expectStatus(await probe({ ...user, authorization: basic(user.username, newPassword) }), 200);
  });

  it('refuses a deleted user right after the delete', async () => {
    const user = await serviceProviderUser();
    expectStatus(await probe(user), 200);
    expectStatus(await http.remove(`${BASE}/${user.identifier}`), 204);
    expectErrorBody(await probe(user), 401);
    expectErrorBody(
      await http.get(`${BASE}/${user.identifier}`),
      404,
      `Unable to find instance with identifier '${user.identifier}'.`,
    );
  });

  it('applies a role change at once, both ways', async () => {
    const user = await serviceProviderUser();
    expectErrorBody(await http.get(BASE, user), 403);
    const promoted = expectStatus(
      await http.send('PUT', `${BASE}/${user.identifier}`, { username: user.username, role: 'ADMIN' }),
      200,
    );
    expect(promoted).toMatchObject({ role: 'ADMIN', serviceProvider: null });
    expectStatus(await http.get(BASE, user), 200);
    expectStatus(
      await http.send(
        'PUT',
        `${BASE}/${user.identifier}`,
        { username: user.username, role: 'REGISTRY_AUTHORITY' },
        user,
      ),
      200,
    );
    expectErrorBody(await http.get(BASE, user), 403);
  });

  it('moves a service provider user to another provider at once', async () => {
    const user = await serviceProviderUser();
    expectStatus(await probe(user), 200);
    const moved = expectStatus(
      await http.send('PUT', `${BASE}/${user.identifier}`, {
        username: user.username,
        role: 'SERVICE_PROVIDER',
        serviceProvider: { identifier: t.fixture.otherServiceProviderId },
      }),
      200,
    );
    expect(moved.serviceProvider).toEqual({ identifier: t.fixture.otherServiceProviderId, title: 'Provider Two' });
    const caller = await t.app.credentials.verify(user.username, user.password, LOOPBACK);
    expect(caller?.serviceProviderId).toBe(t.fixture.otherServiceProviderId);
  });
});

describe('the credential cache', () => {
  it('does not keep a check that read the user before a change, so the change still applies on the next request', async () => {
    const user = await serviceProviderUser();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slowDb: Database = {
      ...t.db,
      query: async (sql, params) => {
        await gate;
        return t.db.query(sql, params);
      },
      runScript: (sql) => t.db.runScript(sql),
    };
    const verifier = credentialVerifier(slowDb);
    const racing = verifier.verify(user.username, user.password, LOOPBACK);
    verifier.forgetAll();
    release();
    expect((await racing)?.userId).toBe(user.identifier);
    await t.db.query('DELETE FROM users WHERE id = $1', [user.identifier]);
    expect(await verifier.verify(user.username, user.password, LOOPBACK)).toBeNull();
  });
});

describe('the last ADMIN', () => {
  it('cannot be deleted or demoted, so that someone can still manage credentials', async () => {
    const admins = expectStatus(await http.get(`${BASE}?size=2000`), 200).content.filter(
      (user: { role: string }) => user.role === 'ADMIN',
    );
    for (const admin of admins.filter((user: { username: string }) => user.username !== 'admin')) {
      expectStatus(
        await http.send('PUT', `${BASE}/${admin.identifier}`, { username: admin.username, role: 'REGISTRY_AUTHORITY' }),
        200,
      );
    }
    const [{ id }] = (await t.db.query<{ id: string }>("SELECT id FROM users WHERE username = 'admin'")) as [
      { id: string },
    ];
    expectErrorBody(
      await http.remove(`${BASE}/${id}`),
      409,
      "The user 'admin' is the last ADMIN and cannot be deleted",
    );
    expectErrorBody(
      await http.send('PUT', `${BASE}/${id}`, { username: 'admin', role: 'REGISTRY_AUTHORITY' }),
      409,
      "The user 'admin' is the last ADMIN and cannot be demoted",
    );
    expectStatus(await http.get(BASE), 200);

    const second = await addUser({ role: 'ADMIN' });
    expectStatus(await http.remove(`${BASE}/${id}`, second), 204);
    expectErrorBody(await http.get(BASE), 401);
    expectErrorBody(await http.remove(`${BASE}/${second.identifier}`, second), 409);
    expectStatus(
      await http.send('POST', BASE, { username: 'admin', password: t.users.admin.password, role: 'ADMIN' }, second),
      201,
    );
    expectStatus(await http.get(BASE), 200);
  });
});

describe('not found, roles, find and media types', () => {
  it('answers 404 for an unknown identifier on get, update and delete', async () => {
    const message = `Unable to find instance with identifier '${UNKNOWN}'.`;
    expectErrorBody(await http.get(`${BASE}/${UNKNOWN}`), 404, message);
    expectErrorBody(
      await http.send('PUT', `${BASE}/${UNKNOWN}`, { username: unique('u'), role: 'ADMIN' }),
      404,
      message,
    );
    expectErrorBody(await http.remove(`${BASE}/${UNKNOWN}`), 404, message);
  });

  it('is for ADMIN only: not even the registry authority manages credentials', async () => {
    const user = await addUser();
    const others = [t.users.authority, t.users.serviceProvider, t.users.accessPointProvider];
    await expectRefused((caller) => http.get(BASE, caller), others);
    await expectRefused((caller) => http.get(`${BASE}/${user.identifier}`, caller), others);
    await expectRefused(
      (caller) => http.send('POST', BASE, { username: unique('u'), password: PASSWORD, role: 'ADMIN' }, caller),
      others,
    );
    await expectRefused(
      (caller) => http.send('PUT', `${BASE}/${user.identifier}`, { username: user.username, role: 'ADMIN' }, caller),
      others,
    );
    await expectRefused((caller) => http.remove(`${BASE}/${user.identifier}`, caller), others);
    expect(expectStatus(await http.get(`${BASE}/${user.identifier}`), 200).role).toBe('REGISTRY_AUTHORITY');
  });

  it('pages and sorts by user name, case-insensitively', async () => {
    const prefix = unique('sort');
    for (const name of ['B', 'a', 'C']) await addUser({ username: `${prefix}-${name}` });
    const page = expectStatus(await http.get(`${BASE}?sort=username,desc&size=2000`), 200);
    const names = (page.content as Array<{ username: string }>)
      .map((user) => user.username)
      .filter((name) => name.startsWith(prefix));
    expect(names).toEqual([`${prefix}-C`, `${prefix}-B`, `${prefix}-a`]);
    const first = expectStatus(await http.get(`${BASE}?sort=role&sort=username&size=1`), 200);
    expect(first).toMatchObject({
      size: 1,
      numberOfElements: 1,
      first: true,
      last: false,
      totalElements: page.totalElements,
    });
    expect(first.content[0].role).toBe('ACCESS_POINT_PROVIDER');
    expectFieldError(
      expectErrorBody(await http.get(`${BASE}?sort=password`), 400),
      'queryParameters',
      'sort',
      'InvalidSortProperty',
    );
  });

  it('speaks its versioned media types', async () => {
    await expectMediaTypes(t, BASE, 'users', {
      username: unique('media'),
      password: PASSWORD,
      role: 'REGISTRY_AUTHORITY',
    });
  });
});

describe('the first ADMIN', () => {
  it('is not made from settings no user may have, and the start says which', async () => {
    const db = await openTestDatabase();
    try {
      await expect(ensureAdmin(db, 'first-admin', 'password1234')).rejects.toThrow(
        new FirstAdminError(
          'REGISTRY_ADMIN_PASSWORD is one of the commonest passwords; choose another: set another, or unset it to have one generated.',
        ),
      );
      await expect(ensureAdmin(db, 'first-admİn', 'a-fine-long-password')).rejects.toThrow(
        new FirstAdminError('REGISTRY_ADMIN_USERNAME may have only ASCII letters, digits and . _ @ -.'),
      );
      expect(await db.query('SELECT 1 FROM users')).toEqual([]);
      expect((await ensureAdmin(db, 'first-admin', 'a-fine-long-password')).created).toBe(true);
    } finally {
      await db.close();
    }
  });
});
