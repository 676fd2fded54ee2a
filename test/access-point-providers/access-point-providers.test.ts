import { describe, expect, it } from 'vitest';
import {
  accessPointForm,
  addAccessPointProvider,
  addTransportProfile,
  contactForm,
  expectStatus,
  useAdministrationApp,
} from '../helpers/administration.js';
import { unique } from '../helpers/requests.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';

const { t, http, BASE, FORM } = useAdministrationApp({
  path: '/rest/api/access-point-providers',
  form: 'accessPointProviderFormDTO',
});

describe('add, get, update and delete', () => {
  it('adds a provider with its contact', async () => {
    const response = await http.send(
      'POST',
      BASE,
      { title: 'Nordic AP', contact: { name: 'Ola', email: 'ola@nordic.example' } },
      t.users.authority,
    );
    const created = expectStatus(response, 201);
    expect(created).toEqual({
      identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'Nordic AP',
      contact: { name: 'Ola', email: 'ola@nordic.example', phoneNumber: null },
    });
    expect(expectStatus(await http.get(`${BASE}/${created.identifier}`, t.users.accessPointProvider), 200)).toEqual(
      created,
    );
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
    const accessPoint = expectStatus(
      await http.send('POST', '/rest/api/accessPoints', accessPointForm(provider.identifier, profile.value)),
      201,
    );
    const form = { title: 'Renamed AP provider', contact: contactForm('Kari') };
    const updated = expectStatus(await http.send('PUT', `${BASE}/${provider.identifier}`, form), 200);
    expect(updated).toEqual({ identifier: provider.identifier, ...form });
    expect(expectStatus(await http.get(`/rest/api/accessPoints/${accessPoint.identifier}`), 200).provider).toEqual(
      updated,
    );
  });
});

describe('validation', () => {
  it('requires a title and a contact, reporting both at once', async () => {
    const body = expectErrorBody(
      await http.send('POST', BASE, { title: '' }),
      400,
      `Validation failed for object='${FORM}'. Error count: 2`,
    );
    expectFieldError(body, FORM, 'title', 'NotEmpty');
    expectFieldError(body, FORM, 'contact', 'NotNull', 'must not be null');
  });

  it('checks the contact fields on update', async () => {
    const provider = await addAccessPointProvider(t);
    const body = expectErrorBody(
      await http.send('PUT', `${BASE}/${provider.identifier}`, {
        title: 'T',
        contact: { name: '', email: 'not an address' },
      }),
      400,
    );
    expectFieldError(body, FORM, 'contact.name', 'NotEmpty');
    expectFieldError(body, FORM, 'contact.email', 'Email');
  });
});

describe('not found and conflicts', () => {
  it('refuses to delete a provider that still has access points and users', async () => {
    const id = t.fixture.accessPointProviderId;
    expectErrorBody(
      await http.remove(`${BASE}/${id}`),
      409,
      `The access point provider 'Test AP Provider' is still used by 1 access point(s) and 1 user(s)`,
    );
    expectStatus(await http.get(`/rest/api/accessPoints/${t.fixture.accessPointId}`), 200);
  });
});

describe('find', () => {
  it('sorts by contact name', async () => {
    const prefix = unique('sort');
    for (const title of [`${prefix} b`, `${prefix} a`, `${prefix} c`]) await addAccessPointProvider(t, title);
    const byContact = expectStatus(await http.get(`${BASE}?sort=contact.name,desc&size=2000`), 200);
    const names = (byContact.content as Array<{ contact: { name: string } }>).map((provider) => provider.contact.name);
    expect(new Set(names)).toEqual(new Set(['Ola', 'Nora Network', 'Kari', 'Ann Operator']));
    expect(names).toEqual([...names].sort().reverse());
  });
});
