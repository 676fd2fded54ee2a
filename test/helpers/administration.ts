import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, expect } from 'vitest';
import { useTestApp, type TestApp, type TestUser } from './app.js';
import { expectErrorBody } from './assertions.js';
import { requests, unique, type Caller } from './requests.js';

/** Set-up, requests and builders shared by the tests of the administration API (providers, access points, users, ...). */

export const UNKNOWN = '00000000-0000-4000-8000-000000000000';
export const vendor = (operation: string) => `application/vnd.registry.${operation}.v1+json`;

/** Requests as the ADMIN, unless a request names its caller. */
export const asAdmin = (t: TestApp) => requests(t, { reads: 'admin', writes: 'admin' });

/**
 * The set-up of an administration test file: its own test app, requests as the ADMIN, and the resource under
 * test: its path (`BASE`) and the object name of its form in validation errors (`FORM`).
 */
export function useAdministrationApp(resource: { path: string; form: string }) {
  const t = useTestApp();
  return { t, http: asAdmin(t), BASE: resource.path, FORM: resource.form };
}

export function expectStatus(response: LightMyRequestResponse, status: number) {
  expect(response.statusCode, response.body).toBe(status);
  return response.statusCode === 204 ? undefined : response.json();
}

/** 401 without credentials, 403 for each of `forbidden`: the operation is refused before it does anything. */
export async function expectRefused(
  call: (user: Caller) => Promise<LightMyRequestResponse>,
  forbidden: readonly TestUser[],
) {
  const anonymous = await call(null);
  expectErrorBody(anonymous, 401);
  expect(anonymous.headers['www-authenticate']).toBe('Basic realm="registry"');
  for (const user of forbidden) expectErrorBody(await call(user), 403, 'Access is denied');
}

/** Adds through the API as the admin and returns the created resource. */
export async function add(t: TestApp, url: string, payload: Record<string, unknown>) {
  return expectStatus(await asAdmin(t).send('POST', url, payload), 201);
}

export const contactForm = (name = 'Nora Network') => ({
  name,
  email: 'nora@provider.example',
  phoneNumber: '+47 22 00 00 00',
});

export const addAccessPointProvider = (t: TestApp, title = unique('AP provider')) =>
  add(t, '/rest/api/access-point-providers', { title, contact: contactForm() });

export const addTransportProfile = (t: TestApp, overrides: Record<string, unknown> = {}) =>
  add(t, '/rest/api/transport-profiles', { value: unique('peppol-transport-as4'), title: 'AS4', ...overrides });

export function accessPointForm(providerId: string, profileValue: string, overrides: Record<string, unknown> = {}) {
  return {
    title: unique('Access point'),
    provider: { identifier: providerId },
    endpoints: [
      { url: 'https://ap.example/as4', transportProfile: { value: profileValue, certificateTypes: ['PEPPOL AP G3'] } },
    ],
    ...overrides,
  };
}

/** An access point with one endpoint, of a new provider, on a new transport profile. */
export async function addAccessPoint(t: TestApp, overrides: Record<string, unknown> = {}) {
  const provider = await addAccessPointProvider(t);
  const profile = await addTransportProfile(t);
  return add(t, '/rest/api/accessPoints', accessPointForm(provider.identifier, profile.value, overrides));
}

export const addServiceProvider = (t: TestApp, accessPointId: string, title = unique('Service provider')) =>
  add(t, '/rest/api/service-providers', { title, accessPoint: { identifier: accessPointId } });

/**
 * The set-up of a test file about the endpoint of an access point: its own test app, requests as the ADMIN, and
 * `formWith`, the form of an access point whose one endpoint has the given fields besides its url and transport
 * profile (of a provider and a profile added once, before the tests).
 */
export function useEndpointForms() {
  const t = useTestApp();
  let providerId: string;
  let profileValue: string;
  beforeAll(async () => {
    providerId = (await addAccessPointProvider(t)).identifier;
    profileValue = (await addTransportProfile(t)).value;
  });
  const formWith = (endpoint: Record<string, unknown>) =>
    accessPointForm(providerId, profileValue, {
      endpoints: [{ url: 'https://ap.example/as4', transportProfile: { value: profileValue }, ...endpoint }],
    });
  return { t, http: asAdmin(t), formWith };
}

/** Checks paging and sorting of a find operation over resources whose `title` starts with `prefix`. */
export async function expectSortedByTitle(t: TestApp, url: string, titles: readonly string[]) {
  const { get } = asAdmin(t);
  const descending = expectStatus(await get(`${url}?sort=title,desc&size=2000`), 200);
  const listed = (descending.content as Array<{ title: string }>)
    .map((item) => item.title)
    .filter((title) => titles.includes(title));
  expect(listed).toEqual([...titles].sort().reverse());
  expect(descending.sort).toEqual({ sorted: true, unsorted: false, empty: false });

  const first = expectStatus(await get(`${url}?sort=title&size=1&page=0`), 200);
  const total = first.totalElements as number;
  expect(first).toMatchObject({
    size: 1,
    number: 0,
    first: true,
    numberOfElements: 1,
    totalPages: total,
    last: total === 1,
  });
  const last = expectStatus(await get(`${url}?sort=title&size=1&page=${total - 1}`), 200);
  expect(last).toMatchObject({
    number: total - 1,
    last: true,
    first: total === 1,
    pageable: { pageNumber: total - 1, pageSize: 1, offset: total - 1 },
  });
  const beyond = expectStatus(await get(`${url}?page=${total}&size=1`), 200);
  expect(beyond).toMatchObject({
    content: [],
    empty: true,
    numberOfElements: 0,
    sort: { sorted: false, unsorted: true, empty: true },
  });

  const unknown = expectErrorBody(await get(`${url}?sort=password`), 400);
  expect(unknown.errors).toEqual([
    expect.objectContaining({ field: 'sort', code: 'InvalidSortProperty', rejectedValue: 'password' }),
  ]);
}

/** The versioned media type is answered when asked for; other types are refused with 406 and 415. */
export async function expectMediaTypes(t: TestApp, url: string, resource: string, form: Record<string, unknown>) {
  const { get, send } = asAdmin(t);
  const found = await get(url, t.users.admin, { accept: vendor(`${resource}.find`) });
  expectStatus(found, 200);
  expect(found.headers['content-type']).toBe(`${vendor(`${resource}.find`)};charset=UTF-8`);
  const plain = await get(url, t.users.admin, { accept: 'application/json' });
  expect(plain.headers['content-type']).toBe('application/json;charset=UTF-8');
  expectErrorBody(await get(url, t.users.admin, { accept: 'text/csv' }), 406);

  const added = await send('POST', url, JSON.stringify(form), t.users.admin, {
    accept: vendor(`${resource}.add`),
    'content-type': `${vendor(`${resource}.add`)};charset=UTF-8`,
  });
  expectStatus(added, 201);
  expect(added.headers['content-type']).toBe(`${vendor(`${resource}.add`)};charset=UTF-8`);
  expectErrorBody(await send('POST', url, JSON.stringify(form), t.users.admin, { 'content-type': 'text/plain' }), 415);
  expectErrorBody(
    await send('POST', url, JSON.stringify(form), t.users.admin, { 'content-type': vendor(`${resource}.update`) }),
    415,
  );
}
