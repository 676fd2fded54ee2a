import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkUncheckedIdentifiers } from '../../src/participants/identifier-faults.js';
import { ImportError, importParticipants } from '../../src/participants/json-lines.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectStatus } from '../helpers/administration.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { gln, norwegianNumber } from '../helpers/organization-numbers.js';
import {
  addParticipant,
  byQualified,
  PARTICIPANTS,
  participantForm,
  uniqueOrganization,
} from '../helpers/participants.js';
import { call, type Caller } from '../helpers/requests.js';

const ADD_FORM = 'addParticipantFormDTO';
const FAULTS = '/rest/api/identifier-faults';

/** A Norwegian number with its last digit one off: the check digit is wrong. */
const wrongCheckDigit = (valid: string) => `${valid.slice(0, -1)}${(Number(valid.at(-1)) + 1) % 10}`;

let t: TestApp;
let relaxed: TestApp;
let dir: string;
beforeAll(async () => {
  [t, relaxed] = await Promise.all([startTestApp(), startTestApp({ identifierValueChecks: false })]);
  dir = await mkdtemp(join(tmpdir(), 'registry-identifier-values-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await Promise.all([t?.close(), relaxed?.close()]);
});

const register = (app: TestApp, overrides: Record<string, unknown>) =>
  call(app.app, {
    method: 'POST',
    url: PARTICIPANTS,
    user: app.users.serviceProvider,
    payload: participantForm(overrides),
  });
const faultsAs = async (app: TestApp, user: Caller) =>
  expectStatus(await call(app.app, { url: `${FAULTS}?size=2000`, user }), 200);

describe("a new participant's organization identifier by its scheme's rule", () => {
  it.each([
    [
      '0192',
      wrongCheckDigit(norwegianNumber('92360901')),
      'not a Norwegian organization number: the check digit is wrong',
    ],
    ['0192', '92360901', 'not a Norwegian organization number: nine digits, the last a mod 11 check digit'],
    ['0192', 'acme-as', 'not a Norwegian organization number: nine digits, the last a mod 11 check digit'],
    ['0088', '1548079098356', 'not a GLN: the check digit is wrong'],
    ['0088', '15480790983', 'not a GLN: 13 digits with a GS1 check digit'],
    ['0007', '2120000788', 'not a Swedish organisation number: the check digit is wrong'],
    ['0184', '02345678', 'not a Danish DIGST number: 8 digits, the first not 0'],
  ])(
    'refuses %s:%s with a 400 at organizationIdentifier: %s, and stores nothing',
    async (icd, organizationIdentifier, message) => {
      const response = await register(t, { icd, organizationIdentifier });
      const body = expectErrorBody(response, 400, `Validation failed for object='${ADD_FORM}'. Error count: 1`);
      expectFieldError(body, ADD_FORM, 'organizationIdentifier', 'IdentifierRule', message);
      expect(body.errors[0].rejectedValue).toBe(organizationIdentifier);
      expect(
        await t.db.query('SELECT 1 FROM participants WHERE icd = $1 AND organization_identifier = $2', [
          icd,
          organizationIdentifier,
        ]),
      ).toEqual([]);
    },
  );

  it("says every fault at once: the identifier's and a process's", async () => {
    const response = await register(t, {
      organizationIdentifier: '123456789',
      processes: [{ qualifiedIdentifier: 'cenbii-procid-ubl::nothing-here' }],
    });
    const body = expectErrorBody(response, 400, `Validation failed for object='${ADD_FORM}'. Error count: 2`);
    expect(body.errors.map((error: { field: string }) => error.field)).toEqual([
      'organizationIdentifier',
      'processes[0]',
    ]);
  });

  it('takes a valid number of each scheme, and any value of an ICD without a rule', async () => {
    const valid: Array<[string, string]> = [
      ['0192', uniqueOrganization()],
      ['0088', gln('730000000017')],
      ['9922', 'ad-any_value-1'],
    ];
    for (const [icd, organizationIdentifier] of valid) {
      const participant = await addParticipant(t.app, t.users.serviceProvider, { icd, organizationIdentifier });
      expect(participant.qualifiedIdentifier).toBe(
        `iso6523-actorid-upis::${icd}:${organizationIdentifier.toLowerCase()}`,
      );
    }
  });

  it('with IDENTIFIER_VALUE_CHECKS=false takes a faulty value, and lists it with its fault', async () => {
    const faulty = wrongCheckDigit(uniqueOrganization());
    const participant = expectStatus(await register(relaxed, { organizationIdentifier: faulty }), 201);
    const page = await faultsAs(relaxed, relaxed.users.serviceProvider);
    expect(page.content).toContainEqual(
      expect.objectContaining({
        identifier: participant.identifier,
        organizationIdentifier: faulty,
        identifierFault: 'not a Norwegian organization number: the check digit is wrong',
      }),
    );
    const status = expectStatus(
      await call(relaxed.app, { url: '/rest/api/status', user: relaxed.users.authority }),
      200,
    );
    expect(status.counts.identifierFaults).toEqual({ count: page.totalElements, exact: true });
  });
});

describe("the JSON-lines import checks each line's organization identifier", () => {
  const fileOf = async (name: string, organizations: string[]) => {
    const path = join(dir, name);
    await writeFile(
      path,
      organizations
        .map((organizationIdentifier) => JSON.stringify(participantForm({ organizationIdentifier })))
        .join('\n'),
    );
    return path;
  };

  it('refuses a line whose value breaks its rule, with its number and reason, and imports the rest', async () => {
    const organizations = [uniqueOrganization(), wrongCheckDigit(uniqueOrganization()), uniqueOrganization()];
    const path = await fileOf('faulty.jsonl', organizations);
    const outcome = await importParticipants(t.db, path, { serviceProviderId: t.fixture.serviceProviderId }).catch(
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(ImportError);
    expect((outcome as ImportError).message.split('\n')).toEqual([
      'Imported 2 participants (0 already present); 1 of 3 lines is wrong and was not imported.',
      'line 2: not a Norwegian organization number: the check digit is wrong',
    ]);
  });

  it('imports it with its fault recorded when the checks are off', async () => {
    const faulty = wrongCheckDigit(uniqueOrganization());
    const path = await fileOf('relaxed.jsonl', [faulty]);
    await importParticipants(relaxed.db, path, {
      serviceProviderId: relaxed.fixture.serviceProviderId,
      valueChecks: 'record',
    });
    const page = await faultsAs(relaxed, relaxed.users.authority);
    expect(page.content.map((row: { organizationIdentifier: string }) => row.organizationIdentifier)).toContain(faulty);
  });
});

describe('participants registered before the rules', () => {
  /** A participant as an earlier version stored it: inserted directly, not checked. */
  async function oldRegistration(organizationIdentifier: string, serviceProviderId = t.fixture.serviceProviderId) {
    const [row] = await t.db.query<{ id: string }>(
      `INSERT INTO participants (service_provider_id, icd, organization_identifier, registration_date, last_modification_date, contact_name)
       VALUES ($1, '0192', $2, '2024-01-02', '2024-01-03', 'Kari') RETURNING id`,
      [serviceProviderId, organizationIdentifier],
    );
    return (row as { id: string }).id;
  }

  it('are checked after a start, listed for their own provider and the authority with their fault, counted, and never changed', async () => {
    const faulty = await oldRegistration('status');
    const othersFaulty = await oldRegistration('123456789', t.fixture.otherServiceProviderId);
    const valid = await oldRegistration(uniqueOrganization());
    const before = expectStatus(
      await call(t.app, { url: byQualified('iso6523-actorid-upis::0192:status'), user: t.users.serviceProvider }),
      200,
    );
    expect(await checkUncheckedIdentifiers(t.db)).toBeGreaterThanOrEqual(3);

    const own = await faultsAs(t, t.users.serviceProvider);
    const ids = (page: { content: { identifier: string }[] }) => page.content.map((row) => row.identifier);
    expect(own.content).toEqual([
      expect.objectContaining({
        identifier: faulty,
        qualifiedIdentifier: 'iso6523-actorid-upis::0192:status',
        identifierFault: 'not a Norwegian organization number: nine digits, the last a mod 11 check digit',
      }),
    ]);
    expect(ids(await faultsAs(t, t.users.otherServiceProvider))).toEqual([othersFaulty]);
    const all = await faultsAs(t, t.users.authority);
    expect(ids(all).sort()).toEqual([faulty, othersFaulty].sort());
    expect(ids(all)).not.toContain(valid);
    expect(ids(await faultsAs(t, t.users.admin)).sort()).toEqual(ids(all).sort());
    expectStatus(await call(t.app, { url: FAULTS, user: t.users.accessPointProvider }), 403);
    expectStatus(await call(t.app, { url: FAULTS, user: null }), 401);

    const status = expectStatus(await call(t.app, { url: '/rest/api/status', user: t.users.authority }), 200);
    expect(status.counts.identifierFaults).toEqual({ count: 2, exact: true });
    const after = expectStatus(
      await call(t.app, { url: byQualified('iso6523-actorid-upis::0192:status'), user: t.users.serviceProvider }),
      200,
    );
    expect(after).toEqual(before);
    expect(await checkUncheckedIdentifiers(t.db)).toBe(0);
  });
});
