import { describe, expect, it } from 'vitest';
import { expectStatus, useEndpointForms } from '../helpers/administration.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';

/** Dates PostgreSQL cannot hold (year 0) or the 4-digit forms cannot write (past 9999) are a 400 on the field, not a 500. */
const { t, http, formWith } = useEndpointForms();

const OUT_OF_RANGE_DAYS = ['0000-01-01', '10000-01-01'];
const OUT_OF_RANGE_INSTANTS = ['0000-01-01T00:00:00Z', '10000-01-01T00:00:00Z', '9999-12-31T23:00:00-02:00'];
/** The first and the last of the 4-digit years, a leap second, lower-case separators: all taken. */
const DAYS_TAKEN = ['0001-01-01', '9999-12-31'];
const INSTANTS_TAKEN = [
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '2016-12-31T23:59:60Z',
  '2025-06-01t12:00:00z',
];

const endpointForm = (field: string, instant: string) => formWith({ [field]: instant });

describe('dates out of range', () => {
  it('lastModificationDate, -From and -To: 400 on the parameter out of range, taken within it', async () => {
    for (const parameter of ['lastModificationDate', 'lastModificationDateFrom', 'lastModificationDateTo']) {
      for (const day of OUT_OF_RANGE_DAYS) {
        const body = expectErrorBody(await http.get(`/rest/api/participants?${parameter}=${day}`), 400);
        expectFieldError(body, 'queryParameters', parameter, 'typeMismatch');
      }
      for (const day of DAYS_TAKEN)
        expect((await http.get(`/rest/api/participants?${parameter}=${day}`)).statusCode).toBe(200);
    }
  });

  it("the audit's and the feed's from and to: 400 on the parameter out of range, taken within it", async () => {
    for (const path of ['/rest/api/audit', '/rest/api/changes']) {
      for (const parameter of ['from', 'to']) {
        for (const instant of OUT_OF_RANGE_INSTANTS) {
          const body = expectErrorBody(await http.get(`${path}?${parameter}=${encodeURIComponent(instant)}`), 400);
          expectFieldError(body, 'queryParameters', parameter, 'typeMismatch');
        }
        for (const instant of INSTANTS_TAKEN) {
          expect((await http.get(`${path}?${parameter}=${encodeURIComponent(instant)}`)).statusCode).toBe(200);
        }
      }
    }
  });

  it("an endpoint's activation and expiration dates: 400 on the field out of range, taken within it", async () => {
    for (const field of ['serviceActivationDate', 'serviceExpirationDate']) {
      for (const instant of OUT_OF_RANGE_INSTANTS) {
        const body = expectErrorBody(
          await http.send('POST', '/rest/api/accessPoints', endpointForm(field, instant), t.users.authority),
          400,
        );
        expectFieldError(body, 'accessPointFormDTO', `endpoints[0].${field}`, 'typeMismatch');
      }
    }
    expectStatus(
      await http.send(
        'POST',
        '/rest/api/accessPoints',
        endpointForm('serviceExpirationDate', '9999-12-31T23:59:59Z'),
        t.users.authority,
      ),
      201,
    );
  });
});
