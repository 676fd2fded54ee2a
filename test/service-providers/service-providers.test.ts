import { describe, expect, it } from 'vitest';
import {
  addAccessPoint,
  addServiceProvider,
  expectStatus,
  UNKNOWN,
  useAdministrationApp,
} from '../helpers/administration.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { insertParticipant } from '../helpers/catalogue.js';
import { ConflictError } from '../../src/core/errors.js';
import { insertServiceProvider } from '../../src/service-providers/repository.js';

const { t, http, BASE, FORM } = useAdministrationApp({
  path: '/rest/api/service-providers',
  form: 'serviceProviderFormDTO',
});

describe('add, get, update and delete', () => {
  it('adds a service provider that names its access point', async () => {
    const response = await http.send(
      'POST',
      BASE,
      {
        title: 'Invoices Inc',
        accessPoint: { identifier: t.fixture.accessPointId, title: 'ignored' },
      },
      t.users.authority,
    );
    const created = expectStatus(response, 201);
    expect(created).toEqual({
      identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'Invoices Inc',
      accessPoint: { identifier: t.fixture.accessPointId, title: 'Test Access Point' },
    });
    expect(expectStatus(await http.get(`${BASE}/${created.identifier}`), 200)).toEqual(created);
  });

  it('serves the fixture providers, so that a provider finds the one it transfers a participant to', async () => {
    const found = expectStatus(await http.get(`${BASE}?size=2000`, t.users.serviceProvider), 200);
    expect(found.content).toContainEqual({
      identifier: t.fixture.otherServiceProviderId,
      title: 'Provider Two',
      accessPoint: { identifier: t.fixture.accessPointId, title: 'Test Access Point' },
    });
    expectStatus(await http.get(`${BASE}/${t.fixture.serviceProviderId}`, t.users.accessPointProvider), 200);
  });

  it('changes title and access point', async () => {
    const provider = await addServiceProvider(t, t.fixture.accessPointId);
    const accessPoint = await addAccessPoint(t, { title: 'Second AP' });
    const updated = expectStatus(
      await http.send('PUT', `${BASE}/${provider.identifier}`, {
        title: 'Renamed',
        accessPoint: { identifier: accessPoint.identifier },
      }),
      200,
    );
    expect(updated).toEqual({
      identifier: provider.identifier,
      title: 'Renamed',
      accessPoint: { identifier: accessPoint.identifier, title: 'Second AP' },
    });
    expect(expectStatus(await http.get(`${BASE}/${provider.identifier}`), 200)).toEqual(updated);
  });
});

describe('validation', () => {
  it('requires a title and an access point, at once', async () => {
    const body = expectErrorBody(
      await http.send('POST', BASE, { title: '' }),
      400,
      `Validation failed for object='${FORM}'. Error count: 2`,
    );
    expectFieldError(body, FORM, 'title', 'NotEmpty');
    expectFieldError(body, FORM, 'accessPoint', 'NotNull');
  });

  it('refuses an unknown or malformed access point', async () => {
    const unknown = expectErrorBody(
      await http.send('POST', BASE, { title: 'T', accessPoint: { identifier: UNKNOWN } }),
      400,
    );
    expectFieldError(unknown, FORM, 'accessPoint', 'NotFound', `no access point with identifier '${UNKNOWN}'`);
    const provider = await addServiceProvider(t, t.fixture.accessPointId);
    const malformed = expectErrorBody(
      await http.send('PUT', `${BASE}/${provider.identifier}`, { title: 'T', accessPoint: { identifier: 'ap-1' } }),
      400,
    );
    expectFieldError(malformed, FORM, 'accessPoint.identifier', 'typeMismatch');
  });
});

describe('not found and conflicts', () => {
  it('refuses to delete a provider that still has participants', async () => {
    const provider = await addServiceProvider(t, t.fixture.accessPointId);
    const participant = await insertParticipant(t.db, provider.identifier, []);
    expectErrorBody(
      await http.remove(`${BASE}/${provider.identifier}`),
      409,
      `The service provider '${provider.title}' is still used by 1 participant(s)`,
    );
    await t.db.query('DELETE FROM participants WHERE id = $1', [participant]);
    expectStatus(await http.remove(`${BASE}/${provider.identifier}`), 204);
  });

  it('does not count participants past their delete date, and expires them (logged) with the provider', async () => {
    const provider = await addServiceProvider(t, t.fixture.accessPointId);
    const expired = await insertParticipant(t.db, provider.identifier, []);
    await t.db.query('UPDATE participants SET delete_date = current_date - 1 WHERE id = $1', [expired]);
    const live = await insertParticipant(t.db, provider.identifier, []);
    expectErrorBody(
      await http.remove(`${BASE}/${provider.identifier}`),
      409,
      `The service provider '${provider.title}' is still used by 1 participant(s)`,
    );
    const expiries = () =>
      t.db.query("SELECT 1 FROM change_log WHERE operation = 'expire' AND before->>'identifier' = $1", [expired]);
    expect(await t.db.query('SELECT 1 FROM participants WHERE id = $1', [expired])).toHaveLength(1);
    expect(await expiries()).toHaveLength(0);
    await t.db.query('DELETE FROM participants WHERE id = $1', [live]);
    expectStatus(await http.remove(`${BASE}/${provider.identifier}`), 204);
    expect(await t.db.query('SELECT 1 FROM participants WHERE id = $1', [expired])).toHaveLength(0);
    // Logged, so the SML and the Directory drop its organization too.
    expect(await expiries()).toHaveLength(1);
  });

  it('answers 409, not 500, when the access point it names is deleted between the check and the write', async () => {
    const write = t.db.transaction((tx) => insertServiceProvider(tx, { title: 'Late', accessPointId: UNKNOWN }));
    await expect(write).rejects.toBeInstanceOf(ConflictError);
    await expect(write).rejects.toThrow('A resource named in accessPoint was deleted meanwhile; nothing was changed');
  });

  it('refuses to delete a provider that users still act for, rather than deleting their credentials with it', async () => {
    const id = t.fixture.otherServiceProviderId;
    expectErrorBody(
      await http.remove(`${BASE}/${id}`),
      409,
      `The service provider 'Provider Two' is still used by 1 user(s)`,
    );
    expectStatus(await http.get('/rest/api/accessPoints', t.users.otherServiceProvider), 200);
  });
});
