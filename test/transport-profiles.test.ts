import { describe, expect, it } from 'vitest';
import {
  accessPointForm, addAccessPointProvider, addTransportProfile, expectMediaTypes, expectRefused, expectSortedByTitle,
  expectStatus, expectWritesRefused, UNKNOWN, useAdministrationApp,
} from './helpers/administration.js';
import { unique } from './helpers/requests.js';
import { expectErrorBody, expectFieldError } from './helpers/assertions.js';

const { t, http, BASE, FORM } = useAdministrationApp({ path: '/rest/api/transport-profiles', form: 'transportProfileFormDTO' });

describe('add, get, update and delete', () => {
  it('adds a transport profile as the authority, not restricted unless said so', async () => {
    const value = unique('peppol-transport-as4-v2_0');
    const response = await http.send('POST', BASE, { value, title: 'Peppol AS4 v2' }, t.users.authority);
    const created = expectStatus(response, 201);
    expect(created).toEqual({ identifier: expect.stringMatching(/^[0-9a-f-]{36}$/), value, title: 'Peppol AS4 v2', restricted: false });
    expect(expectStatus(await http.get(`${BASE}/${created.identifier}`, t.users.serviceProvider), 200)).toEqual(created);
  });

  it('updates value, title and restriction', async () => {
    const profile = await addTransportProfile(t);
    const value = unique('renamed');
    const updated = expectStatus(await http.send('PUT', `${BASE}/${profile.identifier}`, { value, title: 'Old AS2', restricted: true }), 200);
    expect(updated).toEqual({ identifier: profile.identifier, value, title: 'Old AS2', restricted: true });
    expect(expectStatus(await http.get(`${BASE}/${profile.identifier}`), 200)).toEqual(updated);
  });

  it('deletes an unused profile', async () => {
    const profile = await addTransportProfile(t);
    expectStatus(await http.remove(`${BASE}/${profile.identifier}`, t.users.authority), 204);
    expectErrorBody(await http.get(`${BASE}/${profile.identifier}`), 404, `Unable to find instance with identifier '${profile.identifier}'.`);
  });
});

describe('validation', () => {
  it('reports every violation at once', async () => {
    const body = expectErrorBody(await http.send('POST', BASE, { value: '', restricted: 'yes' }), 400);
    expect(body.message).toBe(`Validation failed for object='${FORM}'. Error count: 3`);
    expectFieldError(body, FORM, 'value', 'NotEmpty', 'must not be empty');
    expectFieldError(body, FORM, 'title', 'NotEmpty');
    expect(expectFieldError(body, FORM, 'restricted', 'typeMismatch').bindingFailure).toBe(true);
  });

  it('validates updates the same way', async () => {
    const profile = await addTransportProfile(t);
    const body = expectErrorBody(await http.send('PUT', `${BASE}/${profile.identifier}`, { value: 'x' }), 400);
    expectFieldError(body, FORM, 'title', 'NotEmpty');
  });
});

describe('not found and conflicts', () => {
  it('answers 404 for an unknown identifier on get, update and delete', async () => {
    const message = `Unable to find instance with identifier '${UNKNOWN}'.`;
    const body = expectErrorBody(await http.get(`${BASE}/${UNKNOWN}`), 404, message);
    expect(body.path).toBe(`${BASE}/${UNKNOWN}`);
    expect(body.errors).toBeUndefined();
    expectErrorBody(await http.send('PUT', `${BASE}/${UNKNOWN}`, { value: unique('v'), title: 'T' }), 404, message);
    expectErrorBody(await http.remove(`${BASE}/${UNKNOWN}`), 404, message);
  });

  it('refuses a duplicate value on add and on update with 409', async () => {
    const first = await addTransportProfile(t);
    const second = await addTransportProfile(t);
    const message = `A transport profile with value '${first.value}' already exists`;
    const added = expectErrorBody(await http.send('POST', BASE, { value: first.value, title: 'Again' }), 409, message);
    expect(added.error).toBe('Conflict');
    expectErrorBody(await http.send('PUT', `${BASE}/${second.identifier}`, { value: first.value, title: 'Clash' }), 409, message);
    expect(expectStatus(await http.send('PUT', `${BASE}/${first.identifier}`, { value: first.value, title: 'Same value' }), 200).title)
      .toBe('Same value');
  });

  it('refuses to delete a profile that endpoints use, until they stop using it', async () => {
    const profile = await addTransportProfile(t);
    const provider = await addAccessPointProvider(t);
    const accessPoint = expectStatus(await http.send('POST', '/rest/api/accessPoints', accessPointForm(provider.identifier, profile.value)), 201);
    expectErrorBody(await http.remove(`${BASE}/${profile.identifier}`), 409,
      `The transport profile '${profile.identifier}' is still used by 1 endpoint(s)`);
    expectStatus(await http.remove(`/rest/api/accessPoints/${accessPoint.identifier}`), 204);
    expectStatus(await http.remove(`${BASE}/${profile.identifier}`), 204);
  });
});

describe('roles', () => {
  it('lets every registered caller read, and nobody but ADMIN and REGISTRY_AUTHORITY change', async () => {
    const profile = await addTransportProfile(t);
    for (const user of [t.users.serviceProvider, t.users.accessPointProvider, t.users.authority]) {
      expectStatus(await http.get(BASE, user), 200);
      expectStatus(await http.get(`${BASE}/${profile.identifier}`, user), 200);
    }
    await expectRefused((user) => http.get(BASE, user), []);
    await expectRefused((user) => http.get(`${BASE}/${profile.identifier}`, user), []);
    const others = [t.users.serviceProvider, t.users.accessPointProvider];
    await expectWritesRefused(t, BASE, profile, { value: unique('v'), title: 'T' }, others);
  });
});

describe('find', () => {
  it('pages and sorts', async () => {
    const prefix = unique('sort');
    const titles = [`${prefix} b`, `${prefix} a`, `${prefix} c`];
    for (const title of titles) await addTransportProfile(t, { title });
    await expectSortedByTitle(t, BASE, titles);
    const byValue = expectStatus(await http.get(`${BASE}?sort=value,desc&size=2000`), 200);
    const values = (byValue.content as Array<{ value: string }>).map((item) => item.value);
    expect(values).toEqual([...values].sort().reverse());
  });

  it('speaks its versioned media types', async () => {
    await expectMediaTypes(t, BASE, 'transport-profiles', { value: unique('media'), title: 'Media' });
  });
});
