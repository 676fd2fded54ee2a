import { describe, expect, it } from 'vitest';
import {
  accessPointForm,
  addAccessPointProvider,
  addTransportProfile,
  expectStatus,
  useAdministrationApp,
} from '../helpers/administration.js';
import { unique } from '../helpers/requests.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';

const { t, http, BASE, FORM } = useAdministrationApp({
  path: '/rest/api/transport-profiles',
  form: 'transportProfileFormDTO',
});

describe('add, get, update and delete', () => {
  it('adds a transport profile as the authority, not restricted unless said so', async () => {
    const value = unique('peppol-transport-as4-v2_0');
    const response = await http.send('POST', BASE, { value, title: 'Peppol AS4 v2' }, t.users.authority);
    const created = expectStatus(response, 201);
    expect(created).toEqual({
      identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
      value,
      title: 'Peppol AS4 v2',
      restricted: false,
    });
    expect(expectStatus(await http.get(`${BASE}/${created.identifier}`, t.users.serviceProvider), 200)).toEqual(
      created,
    );
  });

  it('updates value, title and restriction', async () => {
    const profile = await addTransportProfile(t);
    const value = unique('renamed');
    const updated = expectStatus(
      await http.send('PUT', `${BASE}/${profile.identifier}`, { value, title: 'Old AS2', restricted: true }),
      200,
    );
    expect(updated).toEqual({ identifier: profile.identifier, value, title: 'Old AS2', restricted: true });
    expect(expectStatus(await http.get(`${BASE}/${profile.identifier}`), 200)).toEqual(updated);
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
  it('refuses a duplicate value on add and on update with 409', async () => {
    const first = await addTransportProfile(t);
    const second = await addTransportProfile(t);
    const message = `A transport profile with value '${first.value}' already exists`;
    const added = expectErrorBody(await http.send('POST', BASE, { value: first.value, title: 'Again' }), 409, message);
    expect(added.error).toBe('Conflict');
    expectErrorBody(
      await http.send('PUT', `${BASE}/${second.identifier}`, { value: first.value, title: 'Clash' }),
      409,
      message,
    );
    expect(
      expectStatus(
        await http.send('PUT', `${BASE}/${first.identifier}`, { value: first.value, title: 'Same value' }),
        200,
      ).title,
    ).toBe('Same value');
  });

  it('refuses to delete a profile that endpoints use, until they stop using it', async () => {
    const profile = await addTransportProfile(t);
    const provider = await addAccessPointProvider(t);
    const accessPoint = expectStatus(
      await http.send('POST', '/rest/api/accessPoints', accessPointForm(provider.identifier, profile.value)),
      201,
    );
    expectErrorBody(
      await http.remove(`${BASE}/${profile.identifier}`),
      409,
      `The transport profile '${profile.title}' is still used by 1 endpoint(s)`,
    );
    expectStatus(await http.remove(`/rest/api/accessPoints/${accessPoint.identifier}`), 204);
    expectStatus(await http.remove(`${BASE}/${profile.identifier}`), 204);
  });
});

describe('find', () => {
  it('sorts by value', async () => {
    const prefix = unique('sort');
    for (const title of [`${prefix} b`, `${prefix} a`, `${prefix} c`]) await addTransportProfile(t, { title });
    const byValue = expectStatus(await http.get(`${BASE}?sort=value,desc&size=2000`), 200);
    const values = (byValue.content as Array<{ value: string }>).map((item) => item.value);
    expect(values).toEqual([...values].sort().reverse());
  });
});
