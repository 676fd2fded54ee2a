import { describe, expect, it } from 'vitest';
import { expectStatus, useEndpointForms } from '../helpers/administration.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { base64Der, expiredCertificate, testCertificate } from '../helpers/certificates.js';

const BASE = '/rest/api/accessPoints';
const FORM = 'accessPointFormDTO';

const { t, http, formWith } = useEndpointForms();

describe('what an endpoint publishes in the SMP (additions to the specified AccessPoint)', () => {
  it('stores a PEM certificate and serves it as base64 DER with the other publication fields', async () => {
    const { cert } = await testCertificate('ap.example');
    const created = expectStatus(
      await http.send(
        'POST',
        BASE,
        formWith({
          certificate: cert,
          serviceDescription: 'Invoices & orders <AS4>',
          technicalContactUrl: 'mailto:support@ap.example',
          serviceActivationDate: '2025-01-01T00:00:00Z',
          serviceExpirationDate: '2030-01-01T00:00:00.000Z',
        }),
        t.users.authority,
      ),
      201,
    );
    const expected = {
      certificate: base64Der(cert),
      serviceDescription: 'Invoices & orders <AS4>',
      technicalContactUrl: 'mailto:support@ap.example',
      serviceActivationDate: '2025-01-01T00:00:00.000Z',
      serviceExpirationDate: '2030-01-01T00:00:00.000Z',
    };
    expect(created.endpoints[0]).toMatchObject(expected);
    const fetched = expectStatus(await http.get(`${BASE}/${created.identifier}`), 200);
    expect(fetched.endpoints[0]).toMatchObject(expected);
  });

  it('takes base64 DER as well, whitespace and line breaks included', async () => {
    const { cert } = await testCertificate('der.example');
    const der = base64Der(cert);
    const wrapped = der.replace(/(.{64})/g, '$1\n');
    const created = expectStatus(
      await http.send('POST', BASE, formWith({ certificate: wrapped }), t.users.authority),
      201,
    );
    expect(created.endpoints[0].certificate).toBe(der);
  });

  it('keeps the specified shape for an endpoint without the additions', async () => {
    const created = expectStatus(await http.send('POST', BASE, formWith({}), t.users.authority), 201);
    expect(Object.keys(created.endpoints[0]).sort()).toEqual(['transportProfile', 'url']);
  });

  it('stores that an endpoint requires a business-level signature, and takes its response back unchanged', async () => {
    const created = expectStatus(
      await http.send('POST', BASE, formWith({ requireBusinessLevelSignature: true }), t.users.authority),
      201,
    );
    expect(created.endpoints[0].requireBusinessLevelSignature).toBe(true);
    expect(expectStatus(await http.get(`${BASE}/${created.identifier}`), 200)).toEqual(created);
    const { identifier, ...form } = created;
    expect(expectStatus(await http.send('PUT', `${BASE}/${identifier}`, form, t.users.authority), 200)).toEqual(
      created,
    );
  });

  it('requires no business-level signature unless told: false is served as absent, the specified shape', async () => {
    const created = expectStatus(
      await http.send('POST', BASE, formWith({ requireBusinessLevelSignature: true }), t.users.authority),
      201,
    );
    const { identifier, ...form } = created;
    const switchedOff = expectStatus(
      await http.send(
        'PUT',
        `${BASE}/${identifier}`,
        { ...form, endpoints: [{ ...form.endpoints[0], requireBusinessLevelSignature: false }] },
        t.users.authority,
      ),
      200,
    );
    expect(Object.keys(switchedOff.endpoints[0]).sort()).toEqual(['transportProfile', 'url']);
  });

  it.each([
    ['a string', 'true'],
    ['a number', 1],
  ])(
    'refuses a business-level signature requirement that is %s with a 400 naming the field, changing nothing',
    async (_name, value) => {
      const created = expectStatus(
        await http.send('POST', BASE, formWith({ requireBusinessLevelSignature: true }), t.users.authority),
        201,
      );
      const { identifier, ...form } = created;
      const response = await http.send(
        'PUT',
        `${BASE}/${identifier}`,
        { ...form, title: 'not saved', endpoints: [{ ...form.endpoints[0], requireBusinessLevelSignature: value }] },
        t.users.authority,
      );
      expectFieldError(
        expectErrorBody(response, 400),
        FORM,
        'endpoints[0].requireBusinessLevelSignature',
        'typeMismatch',
      );
      expect(expectStatus(await http.get(`${BASE}/${identifier}`), 200)).toEqual(created);
    },
  );

  it.each([
    ['text', 'not a certificate'],
    ['base64 that is no certificate', Buffer.from('hello world, not DER').toString('base64')],
    ['a PEM block with garbage', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'],
  ])(
    'refuses a malformed certificate (%s) with a 400 naming the field, storing nothing',
    async (_name, certificate) => {
      const title = `malformed ${Math.random()}`;
      const response = await http.send('POST', BASE, { ...formWith({ certificate }), title }, t.users.authority);
      const body = expectErrorBody(response, 400);
      expectFieldError(body, FORM, 'endpoints[0].certificate', 'Certificate');
      const all = expectStatus(await http.get(`${BASE}?size=2000`), 200);
      expect(all.content.map((ap: { title: string }) => ap.title)).not.toContain(title);
    },
  );

  it('refuses an expired certificate', async () => {
    const { cert } = await expiredCertificate('old.example');
    const body = expectErrorBody(
      await http.send('POST', BASE, formWith({ certificate: cert }), t.users.authority),
      400,
    );
    expectFieldError(body, FORM, 'endpoints[0].certificate', 'Expired');
  });

  it('refuses an expiration before the activation and a contact URL that is no URI', async () => {
    const body = expectErrorBody(
      await http.send(
        'POST',
        BASE,
        formWith({
          serviceActivationDate: '2030-01-01T00:00:00Z',
          serviceExpirationDate: '2029-01-01T00:00:00Z',
        }),
        t.users.authority,
      ),
      400,
    );
    expectFieldError(body, FORM, 'endpoints[0].serviceExpirationDate', 'Order');
    expectErrorBody(await http.send('POST', BASE, formWith({ technicalContactUrl: 'no uri' }), t.users.authority), 400);
  });

  it('replaces the certificate on update', async () => {
    const first = await testCertificate('first.example');
    const second = await testCertificate('second.example');
    const created = expectStatus(
      await http.send('POST', BASE, formWith({ certificate: first.cert }), t.users.authority),
      201,
    );
    const updated = expectStatus(
      await http.send(
        'PUT',
        `${BASE}/${created.identifier}`,
        { ...formWith({ certificate: second.cert }), title: created.title },
        t.users.authority,
      ),
      200,
    );
    expect(updated.endpoints[0].certificate).toBe(base64Der(second.cert));
  });
});
