import { describe, expect, it } from 'vitest';
import {
  accessPointForm, addAccessPointProvider, addTransportProfile, contactForm, expectMediaTypes, expectRefused,
  expectSortedByTitle, expectStatus, expectWritesRefused, UNKNOWN, useAdministrationApp,
} from './helpers/administration.js';
import { unique } from './helpers/requests.js';
import { expectErrorBody, expectFieldError } from './helpers/assertions.js';

const { t, http, BASE, FORM } = useAdministrationApp({ path: '/rest/api/access-point-providers', form: 'accessPointProviderFormDTO' });

describe('add, get, update and delete', () => {
  it('adds a provider with its contact', async () => {
    const response = await http.send('POST', BASE, { title: 'Nordic AP', contact: { name: 'Ola', email: 'ola@nordic.example' } }, t.users.authority);
    const created = expectStatus(response, 201);
    expect(created).toEqual({
      identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'Nordic AP',
      contact: { name: 'Ola', email: 'ola@nordic.example', phoneNumber: null },
    });
    expect(expectStatus(await http.get(`${BASE}/${created.identifier}`, t.users.accessPointProvider), 200)).toEqual(created);
  });

  it('shows the fixture provider that the access point provider user acts for', async () => {
    const provider = expectStatus(await http.get(`${BASE}/${t.fixture.accessPointProviderId}`), 200);
    expect(provider).toEqual({
      identifier: t.fixture.accessPointProviderId,
      title: 'Test AP Provider',
      contact: { name: 'Ann Operator', email: 'ann@ap.example', phoneNumber: null },
    });
  });

  it('updates title and contact, and access points show the change', async () => {
    const provider = await addAccessPointProvider(t);
    const profile = await addTransportProfile(t);
    const accessPoint = expectStatus(await http.send('POST', '/rest/api/accessPoints', accessPointForm(provider.identifier, profile.value)), 201);
    const form = { title: 'Renamed AP provider', contact: contactForm('Kari') };
    const updated = expectStatus(await http.send('PUT', `${BASE}/${provider.identifier}`, form), 200);
    expect(updated).toEqual({ identifier: provider.identifier, ...form });
    expect(expectStatus(await http.get(`/rest/api/accessPoints/${accessPoint.identifier}`), 200).provider).toEqual(updated);
  });

  it('deletes a provider without access points or users', async () => {
    const provider = await addAccessPointProvider(t);
    expectStatus(await http.remove(`${BASE}/${provider.identifier}`), 204);
    expectErrorBody(await http.get(`${BASE}/${provider.identifier}`), 404, `Unable to find instance with identifier '${provider.identifier}'.`);
  });
});

describe('validation', () => {
  it('requires a title and a contact, reporting both at once', async () => {
    const body = expectErrorBody(await http.send('POST', BASE, { title: '' }), 400, `Validation failed for object='${FORM}'. Error count: 2`);
    expectFieldError(body, FORM, 'title', 'NotEmpty');
    expectFieldError(body, FORM, 'contact', 'NotNull', 'must not be null');
  });

  it('checks the contact fields on update', async () => {
    const provider = await addAccessPointProvider(t);
    const body = expectErrorBody(await http.send('PUT', `${BASE}/${provider.identifier}`, {
      title: 'T', contact: { name: '', email: 'not an address' },
    }), 400);
    expectFieldError(body, FORM, 'contact.name', 'NotEmpty');
    expectFieldError(body, FORM, 'contact.email', 'Email');
  });
});

describe('not found and conflicts', () => {
  it('answers 404 for an unknown identifier on get, update and delete', async () => {
    const message = `Unable to find instance with identifier '${UNKNOWN}'.`;
    expectErrorBody(await http.get(`${BASE}/${UNKNOWN}`), 404, message);
    expectErrorBody(await http.send('PUT', `${BASE}/${UNKNOWN}`, { title: 'T', contact: contactForm() }), 404, message);
    expectErrorBody(await http.remove(`${BASE}/${UNKNOWN}`), 404, message);
  });

  it('refuses to delete a provider that still has access points and users', async () => {
    const id = t.fixture.accessPointProviderId;
    expectErrorBody(await http.remove(`${BASE}/${id}`), 409,
      `The access point provider '${id}' is still used by 1 access point(s) and 1 user(s)`);
    expectStatus(await http.get(`/rest/api/accessPoints/${t.fixture.accessPointId}`), 200);
  });
});

describe('roles', () => {
  it('lets registered callers read and only ADMIN and REGISTRY_AUTHORITY change', async () => {
    const provider = await addAccessPointProvider(t);
    for (const user of [t.users.serviceProvider, t.users.accessPointProvider]) expectStatus(await http.get(BASE, user), 200);
    await expectRefused((user) => http.get(BASE, user), []);
    await expectRefused((user) => http.get(`${BASE}/${provider.identifier}`, user), []);
    const others = [t.users.serviceProvider, t.users.accessPointProvider];
    const form = { title: 'T', contact: contactForm() };
    await expectWritesRefused(t, BASE, provider, form, others);
  });
});

describe('find', () => {
  it('pages and sorts, also by contact name', async () => {
    const prefix = unique('sort');
    const titles = [`${prefix} b`, `${prefix} a`, `${prefix} c`];
    for (const title of titles) await addAccessPointProvider(t, title);
    await expectSortedByTitle(t, BASE, titles);
    const byContact = expectStatus(await http.get(`${BASE}?sort=contact.name,desc&size=2000`), 200);
    const names = (byContact.content as Array<{ contact: { name: string } }>).map((provider) => provider.contact.name);
    expect(new Set(names)).toEqual(new Set(['Ola', 'Nora Network', 'Kari', 'Ann Operator']));
    expect(names).toEqual([...names].sort().reverse());
  });

  it('speaks its versioned media types', async () => {
    await expectMediaTypes(t, BASE, 'access-point-providers', { title: 'Media', contact: contactForm() });
  });
});
