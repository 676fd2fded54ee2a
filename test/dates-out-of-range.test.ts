import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { accessPointForm, addAccessPointProvider, addTransportProfile, asAdmin, expectStatus } from './helpers/administration.js';
import { expectErrorBody, expectFieldError } from './helpers/assertions.js';

/** Dates PostgreSQL cannot hold (year 0) or the 4-digit forms cannot write (past 9999) are a 400 on the field, not a 500. */
let t: TestApp;
let http: ReturnType<typeof asAdmin>;
let providerId: string;
let profileValue: string;

beforeAll(async () => {
  t = await startTestApp();
  http = asAdmin(t);
  providerId = (await addAccessPointProvider(t)).identifier;
  profileValue = (await addTransportProfile(t)).value;
});
afterAll(async () => t.close());

const OUT_OF_RANGE_DAYS = ['0000-01-01', '10000-01-01'];
const OUT_OF_RANGE_INSTANTS = ['0000-01-01T00:00:00Z', '10000-01-01T00:00:00Z', '9999-12-31T23:00:00-02:00'];

describe('dates out of range', () => {
  it.each(OUT_OF_RANGE_DAYS)('lastModificationDate, -From and -To %s: 400 on the parameter', async (day) => {
    for (const parameter of ['lastModificationDate', 'lastModificationDateFrom', 'lastModificationDateTo']) {
      const body = expectErrorBody(await http.get(`/rest/api/participants?${parameter}=${day}`), 400);
      expectFieldError(body, 'queryParameters', parameter, 'typeMismatch');
    }
  });

  it.each(OUT_OF_RANGE_INSTANTS)('the audit\'s and the feed\'s from and to %s: 400 on the parameter', async (instant) => {
    for (const [path, objectName] of [['/rest/api/audit', 'queryParameters'], ['/rest/api/changes', 'queryParameters']] as const) {
      for (const parameter of ['from', 'to']) {
        const body = expectErrorBody(await http.get(`${path}?${parameter}=${encodeURIComponent(instant)}`), 400);
        expectFieldError(body, objectName, parameter, 'typeMismatch');
      }
    }
  });

  it.each(OUT_OF_RANGE_INSTANTS)('an endpoint\'s activation and expiration dates %s: 400 on the field', async (instant) => {
    for (const field of ['serviceActivationDate', 'serviceExpirationDate']) {
      const form = accessPointForm(providerId, profileValue, {
        endpoints: [{ url: 'https://ap.example/as4', transportProfile: { value: profileValue }, [field]: instant }],
      });
      const body = expectErrorBody(await http.send('POST', '/rest/api/accessPoints', form, t.users.authority), 400);
      expectFieldError(body, 'accessPointFormDTO', `endpoints[0].${field}`, 'typeMismatch');
    }
  });

  it('the first and the last day of the 4-digit years, a leap second and lower-case separators are taken', async () => {
    for (const day of ['0001-01-01', '9999-12-31']) {
      expect((await http.get(`/rest/api/participants?lastModificationDateFrom=${day}`)).statusCode).toBe(200);
    }
    for (const instant of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2016-12-31T23:59:60Z', '2025-06-01t12:00:00z']) {
      expect((await http.get(`/rest/api/audit?from=${encodeURIComponent(instant)}`)).statusCode).toBe(200);
    }
    const form = accessPointForm(providerId, profileValue, {
      endpoints: [{ url: 'https://ap.example/as4', transportProfile: { value: profileValue }, serviceExpirationDate: '9999-12-31T23:59:59Z' }],
    });
    expectStatus(await http.send('POST', '/rest/api/accessPoints', form, t.users.authority), 201);
  });
});
