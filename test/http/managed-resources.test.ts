import { describe, expect, it } from 'vitest';
import { useTestApp, type TestApp } from '../helpers/app.js';
import {
  accessPointForm,
  add,
  addAccessPoint,
  addAccessPointProvider,
  addServiceProvider,
  addTransportProfile,
  asAdmin,
  contactForm,
  expectMediaTypes,
  expectRefused,
  expectSortedByTitle,
  expectStatus,
  UNKNOWN,
  vendor,
} from '../helpers/administration.js';
import { expectErrorBody, expectFieldError, expectSecurityHeaders } from '../helpers/assertions.js';
import { addDocumentType, addProcess, documentTypeForm, processForm } from '../helpers/catalogue.js';
import { unique, type Caller } from '../helpers/requests.js';

/**
 * What every resource the authority manages shares (processes, document types, capabilities, access points and
 * their providers, transport profiles, service providers), tested once per resource. Each resource's own file
 * tests what is its own.
 */

interface Identified {
  identifier: string;
}

interface ManagedResource {
  path: string;
  /** The name in its vendor media types: `application/vnd.registry.{media}.find.v1+json`. */
  media: string;
  /** The media type of its array variant of find, if it has one. */
  stream?: string;
  /** Anonymous callers read it too; else only registered ones. */
  publicReads: boolean;
  /** Adds one as the ADMIN (with `title`, where given) and returns it. */
  add: (t: TestApp, title?: string) => Promise<Identified>;
  /** A valid form for add and update, one a call (unique where the resource wants it). */
  form: (t: TestApp) => Promise<Record<string, unknown>>;
}

// Each resource's writes with a wrong ADMIN password are three failed sign-ins of one username, and a correct
// one answered from the verified-credentials cache does not reset the count: the throttle is not what is tested.
const t = useTestApp({ app: { signInThrottle: { freeFailures: 1000, maxFailures: 1000 } } });
const http = asAdmin(t);

const RESOURCES: Record<string, ManagedResource> = {
  processes: {
    path: '/rest/api/processes',
    media: 'processes',
    stream: 'application/vnd.registry.processes.stream.v1+json',
    publicReads: true,
    add: (app, title) => addProcess(app.app, app.users.admin, title === undefined ? {} : { title }),
    form: async () => processForm(),
  },
  'document types': {
    path: '/rest/api/document-types',
    media: 'document-types',
    publicReads: true,
    add: (app, title) => addDocumentType(app.app, app.users.admin, title === undefined ? {} : { title }),
    form: async () => documentTypeForm(),
  },
  capabilities: {
    path: '/rest/api/capabilities',
    media: 'capabilities',
    publicReads: true,
    add: (app, title = unique('Capability')) => add(app, '/rest/api/capabilities', { title }),
    form: async () => ({ title: 'T' }),
  },
  'access points': {
    path: '/rest/api/accessPoints',
    media: 'accesspoints',
    publicReads: false,
    add: (app, title) => addAccessPoint(app, title === undefined ? {} : { title }),
    form: async (app) =>
      accessPointForm((await addAccessPointProvider(app)).identifier, (await addTransportProfile(app)).value),
  },
  'access point providers': {
    path: '/rest/api/access-point-providers',
    media: 'access-point-providers',
    publicReads: false,
    add: (app, title) => addAccessPointProvider(app, title),
    form: async () => ({ title: 'T', contact: contactForm() }),
  },
  'transport profiles': {
    path: '/rest/api/transport-profiles',
    media: 'transport-profiles',
    publicReads: false,
    add: (app, title) => addTransportProfile(app, title === undefined ? {} : { title }),
    form: async () => ({ value: unique('v'), title: 'T' }),
  },
  'service providers': {
    path: '/rest/api/service-providers',
    media: 'service-providers',
    publicReads: false,
    add: (app, title) => addServiceProvider(app, app.fixture.accessPointId, title),
    form: async (app) => ({ title: 'T', accessPoint: { identifier: app.fixture.accessPointId } }),
  },
};

const wrongPassword = () => ({
  ...t.users.admin,
  authorization: `Basic ${Buffer.from(`${t.users.admin.username}:not-the-password`).toString('base64')}`,
});
/** Who may read a resource, the least entitled first. */
const readers = (resource: ManagedResource): Caller[] => [
  ...(resource.publicReads ? [null] : []),
  t.users.serviceProvider,
  t.users.otherServiceProvider,
  t.users.accessPointProvider,
  t.users.admin,
  t.users.authority,
];

describe.each(Object.entries(RESOURCES))('%s', (_name, resource) => {
  const BASE = resource.path;
  const notFound = (identifier: string) => `Unable to find instance with identifier '${identifier}'.`;

  it('deletes with 204 and no body; then it is gone for every reader', async () => {
    const existing = await resource.add(t);
    const response = await http.remove(`${BASE}/${existing.identifier}`, t.users.authority);
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expectSecurityHeaders(response);
    for (const user of readers(resource))
      expectErrorBody(await http.get(`${BASE}/${existing.identifier}`, user), 404, notFound(existing.identifier));
  });

  it.each(['GET', 'PUT', 'DELETE'] as const)(
    '%s of an unknown identifier answers the 404 body of the specification',
    async (method) => {
      const responses =
        method === 'GET'
          ? await Promise.all(readers(resource).map((user) => http.get(`${BASE}/${UNKNOWN}`, user)))
          : [
              method === 'PUT'
                ? await http.send('PUT', `${BASE}/${UNKNOWN}`, await resource.form(t))
                : await http.remove(`${BASE}/${UNKNOWN}`),
            ];
      for (const response of responses) {
        expect(expectErrorBody(response, 404, notFound(UNKNOWN))).toEqual({
          timestamp: expect.any(String),
          status: 404,
          error: 'Not Found',
          exception: 'NotFoundError',
          message: notFound(UNKNOWN),
          path: `${BASE}/${UNKNOWN}`,
        });
      }
    },
  );

  it('answers 400 for an identifier that is not a UUID', async () => {
    const responses = [
      ...(await Promise.all(readers(resource).map((user) => http.get(`${BASE}/not-a-uuid`, user)))),
      await http.remove(`${BASE}/12345`),
    ];
    for (const response of responses) {
      const body = expectErrorBody(response, 400);
      expectFieldError(body, 'pathVariables', 'identifier', 'typeMismatch');
      expect(body.errors[0]).toMatchObject({ objectName: 'pathVariables', field: 'identifier' });
    }
  });

  it(
    resource.publicReads
      ? 'lets every role and anonymous callers read'
      : 'lets every registered role read; anonymous callers get 401',
    async () => {
      const existing = await resource.add(t);
      for (const user of readers(resource)) {
        const name = user?.username ?? 'anonymous';
        expect((await http.get(BASE, user)).statusCode, name).toBe(200);
        if (resource.stream)
          expect((await http.get(BASE, user, { accept: resource.stream })).statusCode, name).toBe(200);
        expect(expectStatus(await http.get(`${BASE}/${existing.identifier}`, user), 200), name).toEqual(existing);
      }
      if (!resource.publicReads) {
        await expectRefused((user) => http.get(BASE, user), []);
        await expectRefused((user) => http.get(`${BASE}/${existing.identifier}`, user), []);
      }
    },
  );

  it('lets ADMIN and REGISTRY_AUTHORITY write; other roles get 403, no or wrong credentials 401, and nothing changes', async () => {
    const writers = [t.users.admin, t.users.authority];
    const callers: Record<string, Caller> = { ...t.users, anonymous: null, wrongPassword: wrongPassword() };
    for (const [name, user] of Object.entries(callers)) {
      const existing = await resource.add(t);
      const responses = [
        await http.send('POST', BASE, await resource.form(t), user),
        await http.send('PUT', `${BASE}/${existing.identifier}`, await resource.form(t), user),
        await http.remove(`${BASE}/${existing.identifier}`, user),
      ];
      if (user && writers.includes(user)) {
        expect(
          responses.map((response) => response.statusCode),
          `${name} ${responses.map((response) => response.body).join(' ')}`,
        ).toEqual([201, 200, 204]);
        continue;
      }
      for (const response of responses) {
        if (user === null || name === 'wrongPassword') {
          expectErrorBody(response, 401);
          expect(response.headers['www-authenticate']).toBe('Basic realm="registry"');
        } else expectErrorBody(response, 403, 'Access is denied');
      }
      expect(expectStatus(await http.get(`${BASE}/${existing.identifier}`), 200), name).toEqual(existing);
    }
  });

  it('pages and sorts by title', async () => {
    const prefix = unique('sort');
    const titles = [`${prefix} b`, `${prefix} a`, `${prefix} c`];
    for (const title of titles) await resource.add(t, title);
    await expectSortedByTitle(t, BASE, titles);
  });

  it("speaks its versioned media types: plain JSON on request, 406 and 415 for another resource's or another type", async () => {
    await expectMediaTypes(t, BASE, resource.media, await resource.form(t));
    const other = resource.media === 'processes' ? 'document-types' : 'processes';
    const [least] = readers(resource);
    const plain = await http.get(BASE, least);
    expect(plain.headers['content-type']).toBe(`${vendor(`${resource.media}.find`)};charset=UTF-8`);
    const json = await http.get(BASE, least, { accept: 'application/json' });
    expect(json.headers['content-type']).toBe('application/json;charset=UTF-8');
    expectErrorBody(await http.get(BASE, least, { accept: vendor(`${other}.find`) }), 406);
    expectErrorBody(
      await http.send('POST', BASE, JSON.stringify(await resource.form(t)), t.users.admin, {
        'content-type': vendor(`${other}.add`),
      }),
      415,
    );
  });
});
