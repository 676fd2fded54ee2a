import { describe, expect, it } from 'vitest';
import {
  accessPointForm,
  addAccessPoint,
  addAccessPointProvider,
  addServiceProvider,
  addTransportProfile,
  expectStatus,
  UNKNOWN,
  useAdministrationApp,
  vendor,
} from '../helpers/administration.js';
import { unique } from '../helpers/requests.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { insertAccessPoint } from '../../src/access-points/repository.js';
import { ConflictError } from '../../src/core/errors.js';

const { t, http, BASE, FORM } = useAdministrationApp({ path: '/rest/api/accessPoints', form: 'accessPointFormDTO' });

describe('find and get, as specified', () => {
  it('serves an access point with its provider and its endpoints to every registered role', async () => {
    const provider = await addAccessPointProvider(t, 'Nordic AP');
    const as4 = await addTransportProfile(t, { title: 'Peppol AS4 v2' });
    const as2 = await addTransportProfile(t, { title: 'Peppol AS2 v2' });
    const created = expectStatus(
      await http.send(
        'POST',
        BASE,
        {
          title: 'Nordic AP production',
          provider: { identifier: provider.identifier },
          endpoints: [
            {
              url: 'https://ap.nordic.example/as4',
              transportProfile: { value: as4.value, certificateTypes: ['PEPPOL AP G3', 'QWAC'] },
            },
            { url: 'https://ap.nordic.example/as2', transportProfile: { identifier: as2.identifier } },
          ],
        },
        t.users.authority,
      ),
      201,
    );
    const expected = {
      identifier: created.identifier,
      title: 'Nordic AP production',
      provider: { identifier: provider.identifier, title: 'Nordic AP', contact: provider.contact },
      endpoints: [
        {
          url: 'https://ap.nordic.example/as4',
          transportProfile: { title: 'Peppol AS4 v2', value: as4.value, certificateTypes: ['PEPPOL AP G3', 'QWAC'] },
        },
        {
          url: 'https://ap.nordic.example/as2',
          transportProfile: { title: 'Peppol AS2 v2', value: as2.value, certificateTypes: [] },
        },
      ],
    };
    expect(created).toEqual(expected);
    for (const user of [t.users.serviceProvider, t.users.accessPointProvider, t.users.admin, t.users.authority]) {
      const fetched = await http.get(`${BASE}/${created.identifier}`, user);
      expect(expectStatus(fetched, 200)).toEqual(expected);
      expect(fetched.headers['content-type']).toBe(`${vendor('accesspoints.get')};charset=UTF-8`);
      const found = expectStatus(await http.get(`${BASE}?size=2000`, user), 200);
      expect(found.content).toContainEqual(expected);
    }
  });

  it('serves the fixture access point of the fixture provider, without endpoints', async () => {
    const accessPoint = expectStatus(
      await http.get(`${BASE}/${t.fixture.accessPointId}`, t.users.serviceProvider),
      200,
    );
    expect(accessPoint).toEqual({
      identifier: t.fixture.accessPointId,
      title: 'Test Access Point',
      provider: {
        identifier: t.fixture.accessPointProviderId,
        title: 'Test AP Provider',
        contact: { name: 'Ann Operator', email: 'ann@ap.example', phoneNumber: null },
      },
      endpoints: [],
    });
  });

  it('accepts both spellings of its media types', async () => {
    for (const operation of ['accesspoints.find', 'accessPoints.find']) {
      const response = await http.get(BASE, t.users.serviceProvider, { accept: `${vendor(operation)};charset=UTF-8` });
      expectStatus(response, 200);
      expect(response.headers['content-type']).toMatch(
        /^application\/vnd\.registry\.accesspoints\.find\.v1\+json;charset=UTF-8$/i,
      );
    }
    const get = await http.get(`${BASE}/${t.fixture.accessPointId}`, t.users.serviceProvider, {
      accept: vendor('accessPoints.get'),
    });
    expectStatus(get, 200);
    expectErrorBody(await http.get(BASE, t.users.serviceProvider, { accept: vendor('processes.find') }), 406);
    const added = await http.send(
      'POST',
      BASE,
      JSON.stringify(accessPointForm(t.fixture.accessPointProviderId, (await addTransportProfile(t)).value)),
      t.users.admin,
      { 'content-type': vendor('accessPoints.add'), accept: vendor('accesspoints.add') },
    );
    expectStatus(added, 201);
    expect(added.headers['content-type']).toBe(`${vendor('accesspoints.add')};charset=UTF-8`);
    expectErrorBody(await http.send('POST', BASE, '{}', t.users.admin, { 'content-type': 'text/plain' }), 415);
  });

  it('sorts by provider title', async () => {
    const prefix = unique('sort');
    for (const title of [`${prefix} c`, `${prefix} a`, `${prefix} b`]) await addAccessPoint(t, { title });
    const byProvider = expectStatus(await http.get(`${BASE}?sort=provider.title,desc&sort=title&size=2000`), 200);
    const providers = (byProvider.content as Array<{ provider: { title: string } }>).map((item) => item.provider.title);
    expect(providers).toEqual([...providers].sort().reverse());
  });
});

describe('add, update and delete', () => {
  it('replaces title, provider and endpoints on update', async () => {
    const accessPoint = await addAccessPoint(t);
    const provider = await addAccessPointProvider(t, 'New owner');
    const profile = await addTransportProfile(t, { title: 'Other profile' });
    const updated = expectStatus(
      await http.send(
        'PUT',
        `${BASE}/${accessPoint.identifier}`,
        {
          title: 'Moved',
          provider: { identifier: provider.identifier, title: 'ignored' },
          endpoints: [
            {
              url: 'https://moved.example/',
              transportProfile: { value: profile.value, title: 'ignored', certificateTypes: ['X'] },
            },
          ],
        },
        t.users.authority,
      ),
      200,
    );
    expect(updated).toEqual({
      identifier: accessPoint.identifier,
      title: 'Moved',
      provider,
      endpoints: [
        {
          url: 'https://moved.example/',
          transportProfile: { title: 'Other profile', value: profile.value, certificateTypes: ['X'] },
        },
      ],
    });
    expect(expectStatus(await http.get(`${BASE}/${accessPoint.identifier}`), 200)).toEqual(updated);
  });

  it('takes its own response back unchanged on update', async () => {
    const accessPoint = await addAccessPoint(t);
    const { identifier: _, ...form } = accessPoint;
    expect(expectStatus(await http.send('PUT', `${BASE}/${accessPoint.identifier}`, form), 200)).toEqual(accessPoint);
  });

  it('refuses to delete an access point that a service provider names', async () => {
    const accessPoint = await addAccessPoint(t);
    const serviceProvider = await addServiceProvider(t, accessPoint.identifier);
    expectErrorBody(
      await http.remove(`${BASE}/${accessPoint.identifier}`),
      409,
      `The access point '${accessPoint.title}' is still used by 1 service provider(s)`,
    );
    expectStatus(await http.remove(`/rest/api/service-providers/${serviceProvider.identifier}`), 204);
    expectStatus(await http.remove(`${BASE}/${accessPoint.identifier}`), 204);
  });
});

describe('validation', () => {
  it('reports every schema violation at once', async () => {
    const body = expectErrorBody(
      await http.send('POST', BASE, {
        title: '',
        endpoints: [
          { url: 'http://ap.example/as4', transportProfile: { value: 'x', certificateTypes: ['A', 'A'] } },
          { url: '/relative', transportProfile: { value: 'x' } },
          { url: 'https://user:secret@ap.example/', transportProfile: { value: 'x' } },
          { url: 'https://ap.example/' },
        ],
      }),
      400,
    );
    expectFieldError(body, FORM, 'title', 'NotEmpty');
    expectFieldError(body, FORM, 'provider', 'NotNull');
    expectFieldError(body, FORM, 'endpoints[0].url', 'URL', 'must be an absolute https URL');
    expectFieldError(body, FORM, 'endpoints[1].url', 'URL');
    expectFieldError(body, FORM, 'endpoints[2].url', 'URL');
    expectFieldError(body, FORM, 'endpoints[0].transportProfile.certificateTypes', 'UniqueElements');
    expectFieldError(body, FORM, 'endpoints[3].transportProfile', 'NotNull');
    expect(body.message).toBe(`Validation failed for object='${FORM}'. Error count: ${body.errors.length}`);
    expect(body.errors).toHaveLength(7);
  });

  it('reports an unknown provider and unknown transport profiles, by value or identifier, at once', async () => {
    const profile = await addTransportProfile(t);
    const body = expectErrorBody(
      await http.send('POST', BASE, {
        title: 'AP',
        provider: { identifier: UNKNOWN },
        endpoints: [
          { url: 'https://a.example/', transportProfile: { value: 'no-such-profile' } },
          { url: 'https://b.example/', transportProfile: { value: profile.value } },
          { url: 'https://c.example/', transportProfile: { identifier: UNKNOWN } },
          { url: 'https://d.example/', transportProfile: {} },
        ],
      }),
      400,
      `Validation failed for object='${FORM}'. Error count: 4`,
    );
    expectFieldError(body, FORM, 'provider', 'NotFound', `no access point provider with identifier '${UNKNOWN}'`);
    expectFieldError(
      body,
      FORM,
      'endpoints[0].transportProfile',
      'NotFound',
      "no transport profile with identifier 'no-such-profile'",
    );
    expectFieldError(body, FORM, 'endpoints[2].transportProfile', 'NotFound');
    expectFieldError(
      body,
      FORM,
      'endpoints[3].transportProfile',
      'NotFound',
      'names no transport profile: give identifier or value',
    );
  });

  it('refuses a restricted transport profile for a new endpoint, but keeps endpoints that already use it', async () => {
    const profile = await addTransportProfile(t);
    const accessPoint = await addAccessPoint(t);
    const form = accessPointForm(accessPoint.provider.identifier, profile.value);
    const existing = expectStatus(await http.send('POST', BASE, form), 201);
    expectStatus(
      await http.send('PUT', `/rest/api/transport-profiles/${profile.identifier}`, {
        value: profile.value,
        title: 'Old',
        restricted: true,
      }),
      200,
    );

    const body = expectErrorBody(await http.send('POST', BASE, form), 400);
    expectFieldError(body, FORM, 'endpoints[0].transportProfile', 'Restricted');
    const { identifier: _, ...unchanged } = existing;
    const kept = expectStatus(
      await http.send('PUT', `${BASE}/${existing.identifier}`, { ...unchanged, title: 'Still on the old profile' }),
      200,
    );
    expect(kept.endpoints[0].transportProfile).toMatchObject({ value: profile.value, title: 'Old' });
    const moved = await http.send('PUT', `${BASE}/${accessPoint.identifier}`, {
      ...form,
      title: 'Moving to the old profile',
    });
    expectFieldError(expectErrorBody(moved, 400), FORM, 'endpoints[0].transportProfile', 'Restricted');
  });

  it('answers 409, not 500, when a provider or transport profile is deleted between the check and the write', async () => {
    const noProvider = t.db.transaction((tx) =>
      insertAccessPoint(tx, { title: 'Late', providerId: UNKNOWN, endpoints: [] }),
    );
    await expect(noProvider).rejects.toThrow(
      new ConflictError('A resource named in provider was deleted meanwhile; nothing was changed'),
    );
    const noProfile = t.db.transaction((tx) =>
      insertAccessPoint(tx, {
        title: 'Late',
        providerId: t.fixture.accessPointProviderId,
        endpoints: [{ url: 'https://late.example/', transportProfileId: UNKNOWN, certificateTypes: [] }],
      }),
    );
    await expect(noProfile).rejects.toThrow('A resource named in endpoints was deleted meanwhile; nothing was changed');
    expect(await t.db.query("SELECT 1 FROM access_points WHERE title = 'Late'")).toHaveLength(0);
  });

  it('refuses two endpoints with the same url and transport profile, however the profile is named', async () => {
    const profile = await addTransportProfile(t);
    const body = expectErrorBody(
      await http.send('POST', BASE, {
        title: 'AP',
        provider: { identifier: t.fixture.accessPointProviderId },
        endpoints: [
          { url: 'https://same.example/', transportProfile: { value: profile.value } },
          { url: 'https://same.example/', transportProfile: { identifier: profile.identifier } },
        ],
      }),
      400,
    );
    expectFieldError(body, FORM, 'endpoints[1]', 'UniqueElements');
  });
});
