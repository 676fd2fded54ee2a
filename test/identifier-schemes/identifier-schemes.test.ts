import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { readCodeLists } from '../../src/code-lists/codelists.js';
import { loadCatalogue } from '../../src/code-lists/repository.js';
import { ICDS } from '../../src/core/schemas.js';
import { IdentifierSchemeList } from '../../src/identifier-schemes/schemes.js';
import { prepare } from '../../src/setup/first-start.js';
import { useTestApp, type TestUser } from '../helpers/app.js';
import { expectErrorBody, expectFieldError } from '../helpers/assertions.js';
import { uniqueFinnishBusinessId } from '../helpers/organization-numbers.js';
import { byQualified, participantForm, PARTICIPANTS, SCHEME, uniqueOrganization } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';
import { accessPointForm, add, addAccessPointProvider, addTransportProfile } from '../helpers/administration.js';
import { testCertificate } from '../helpers/certificates.js';
import { useAccessPointOf } from '../helpers/smp.js';

const t = useTestApp();
const ADD_FORM = 'addParticipantFormDTO';

const register = (overrides: Record<string, unknown>) =>
  call(t.app, {
    method: 'POST',
    url: PARTICIPANTS,
    user: t.users.serviceProvider,
    payload: participantForm(overrides),
  });

const stored = async (icd: string) =>
  Number(
    (await t.db.query<{ count: number }>('SELECT count(*)::int AS count FROM participants WHERE icd = $1', [icd]))[0]
      ?.count,
  );

/** Loads a list into the database as another instance would: this one hears of it through the change log. */
async function loadList(path: string) {
  const report = await loadCatalogue(t.db, (await readCodeLists([path])).catalogue, { allowOlder: true });
  await t.app.changes.catchUp();
  return report;
}

describe('without a loaded code list: the ICDs of the specification, exactly', () => {
  it('accepts every ICD of the specification and no other four digits', () => {
    const list = new IdentifierSchemeList([]);
    const accepted = Array.from({ length: 10_000 }, (_, n) => String(n).padStart(4, '0')).filter(
      (icd) => list.forNewParticipant(icd).accepted,
    );
    expect(accepted).toEqual([...ICDS].sort());
  });

  it('refuses 0242, which the specification lacks, and takes 9901, which it holds', async () => {
    const body = expectErrorBody(await register({ icd: '0242', organizationIdentifier: '000123' }), 400);
    expect(expectFieldError(body, ADD_FORM, 'icd', 'Icd')).toMatchObject({
      rejectedValue: '0242',
      defaultMessage: 'ICD 0242 is not one of the ICDs of the specification (no Peppol code list is loaded)',
    });
    expect(await stored('0242')).toBe(0);
    expect((await register({ icd: '9901' })).statusCode).toBe(201);
  });
});

/** Participants registered before the list was loaded, with ICDs it removed. */
let oldFinnish: string;
let othersFinnish: string;
let oldVat: string;

describe('with the shipped list, loaded by the first start', () => {
  beforeAll(async () => {
    // Registered while the specification's list stood, which holds 0037 and 9901.
    const registered = async (user: TestUser, icd: string) => {
      const organizationIdentifier = icd === '0037' ? uniqueFinnishBusinessId() : uniqueOrganization();
      const response = await call(t.app, {
        method: 'POST',
        url: PARTICIPANTS,
        user,
        payload: participantForm({ icd, organizationIdentifier, name: 'Old Scheme Oy' }),
      });
      expect(response.statusCode, response.body).toBe(201);
      return response.json().qualifiedIdentifier as string;
    };
    oldFinnish = await registered(t.users.serviceProvider, '0037');
    othersFinnish = await registered(t.users.otherServiceProvider, '0037');
    oldVat = await registered(t.users.serviceProvider, '9901');
    const setup = await prepare(t.db, { REGISTRY_ADMIN_USERNAME: 'first-admin', REGISTRY_DEMO: false });
    expect(setup.starter?.identifierSchemes).toMatchObject({ added: 105 });
    await t.app.changes.catchUp();
  });

  it("accepts 0242, the service providers' own identifiers, with no warning", async () => {
    // Its Main ID is the provider's: the Seat ID of its access point's certificate (test/participants/mls-receivers.test.ts).
    const profile = await addTransportProfile(t);
    const accessPoint = await add(
      t,
      '/rest/api/accessPoints',
      accessPointForm((await addAccessPointProvider(t)).identifier, profile.value, {
        endpoints: [
          {
            url: 'https://pno000123.example/as4',
            transportProfile: { value: profile.value },
            certificate: (await testCertificate('PNO000123')).cert,
          },
        ],
      }),
    );
    await useAccessPointOf(t, t.fixture.serviceProviderId, accessPoint.identifier);
    const response = await register({ icd: '0242', organizationIdentifier: '000123' });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.headers.warning).toBeUndefined();
    const { qualifiedIdentifier } = response.json();
    expect(qualifiedIdentifier).toBe(`${SCHEME}::0242:000123`);
    expect(
      (await call(t.app, { url: byQualified(qualifiedIdentifier), user: t.users.serviceProvider })).statusCode,
    ).toBe(200);
    expect(
      (await call(t.app, { url: `/rest/api/organizations/${encodeURIComponent(qualifiedIdentifier)}/processes` }))
        .statusCode,
    ).toBe(200);
  });

  it('refuses an ICD removed from the list for new participants, naming the date, and stores nothing', async () => {
    const before = await stored('0037');
    const body = expectErrorBody(
      await register({ icd: '0037', organizationIdentifier: uniqueFinnishBusinessId() }),
      400,
      `Validation failed for object='${ADD_FORM}'. Error count: 1`,
    );
    expect(expectFieldError(body, ADD_FORM, 'icd', 'IcdRemoved')).toMatchObject({
      rejectedValue: '0037',
      defaultMessage: 'ICD 0037 was removed from the Peppol code list on 2024-12-31: no new participants',
    });
    expect(await stored('0037')).toBe(before);
    // 9901 was in the specification's list; the code list removed it on 2023-11-30.
    expect(
      expectFieldError(expectErrorBody(await register({ icd: '9901' }), 400), ADD_FORM, 'icd', 'IcdRemoved')
        .defaultMessage,
    ).toBe('ICD 9901 was removed from the Peppol code list on 2023-11-30: no new participants');
  });

  it('accepts a deprecated ICD with a warning the client sees', async () => {
    const response = await register({ icd: '9909', organizationIdentifier: `NO${uniqueOrganization()}MVA` });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.headers.warning).toBe('299 registry "ICD 9909 is deprecated in the Peppol code list"');
  });

  it('refuses an ICD of four digits the list does not name', async () => {
    const body = expectErrorBody(await register({ icd: '1234' }), 400);
    expect(expectFieldError(body, ADD_FORM, 'icd', 'Icd').defaultMessage).toBe(
      'ICD 1234 is not in the Peppol participant identifier schemes code list',
    );
    expect(
      expectFieldError(expectErrorBody(await register({ icd: '12' }), 400), ADD_FORM, 'icd', 'Icd').defaultMessage,
    ).toBe('must be an ICD: four digits, such as 0192');
  });

  it('keeps an existing participant whose ICD was removed: it is found, changed and searched for as before', async () => {
    const own = { user: t.users.serviceProvider };
    expect((await call(t.app, { url: byQualified(oldFinnish), ...own })).json()).toMatchObject({
      icd: '0037',
      name: 'Old Scheme Oy',
    });
    expect(
      (await call(t.app, { url: `/rest/api/organizations/${encodeURIComponent(oldFinnish)}/processes` })).statusCode,
    ).toBe(200);
    const updated = await call(t.app, {
      method: 'PUT',
      url: byQualified(oldFinnish),
      ...own,
      payload: { processes: [], contact: { name: 'Aino Virtanen' } },
    });
    expect(updated.statusCode, updated.body).toBe(200);
    const found = await call(t.app, { url: `${PARTICIPANTS}?icd=0037`, ...own });
    expect(
      found.json().content.map((participant: { qualifiedIdentifier: string }) => participant.qualifiedIdentifier),
    ).toEqual([oldFinnish]);
  });
});

describe('participants whose ICD was removed: listed for their provider and the authority, ended by the authority', () => {
  const REMOVED = '/rest/api/removed-icd-participants';
  const listed = async (user: TestUser) => {
    const response = await call(t.app, { url: `${REMOVED}?sort=qualifiedIdentifier`, user });
    expect(response.statusCode, response.body).toBe(200);
    return response
      .json()
      .content.map((participant: { qualifiedIdentifier: string }) => participant.qualifiedIdentifier);
  };
  const ended = (user: TestUser, query = '') => call(t.app, { method: 'DELETE', url: `${REMOVED}${query}`, user });
  let removedBefore: string[];

  beforeAll(async () => {
    removedBefore = await listed(t.users.authority);
  });

  it("lists a provider its own only, and the authority every provider's", async () => {
    const own = await listed(t.users.serviceProvider);
    expect(own).toEqual(expect.arrayContaining([oldFinnish, oldVat]));
    expect(own).not.toContain(othersFinnish);
    expect(await listed(t.users.otherServiceProvider)).toEqual([othersFinnish]);
    expect(removedBefore).toEqual(expect.arrayContaining([oldFinnish, othersFinnish, oldVat]));
    expect(await listed(t.users.admin)).toEqual(removedBefore);
    expect(removedBefore.every((identifier) => /::(0037|9901):/.test(identifier))).toBe(true);
  });

  it('refuses the end to a provider, and an ICD that is not removed, ending nothing', async () => {
    expectErrorBody(await ended(t.users.serviceProvider), 403);
    const body = expectErrorBody(await ended(t.users.authority, '?icd=0192'), 400);
    expect(expectFieldError(body, 'queryParameters', 'icd', 'IcdNotRemoved').defaultMessage).toBe(
      'ICD 0192 is not removed from the Peppol code list: its participants stay',
    );
    expect(await listed(t.users.admin)).toEqual(removedBefore);
  });

  it('ends them for the authority, one ICD or all, each as a delete in the change log', async () => {
    const finnish = await ended(t.users.authority, '?icd=0037');
    expect(finnish.statusCode, finnish.body).toBe(200);
    expect(finnish.json()).toEqual({ ended: [oldFinnish, othersFinnish].sort(), remaining: 0 });
    expect((await call(t.app, { url: byQualified(oldFinnish), user: t.users.serviceProvider })).statusCode).toBe(404);
    const deletes = await t.db.query<{ identifier: string; username: string }>(
      `SELECT identifier, username FROM change_log WHERE resource = 'participant' AND operation = 'delete' ORDER BY identifier`,
    );
    expect(deletes).toEqual(
      [oldFinnish, othersFinnish].sort().map((identifier) => ({ identifier, username: 'authority' })),
    );

    const rest = await ended(t.users.admin);
    expect(rest.json()).toMatchObject({ remaining: 0 });
    expect(rest.json().ended).toContain(oldVat);
    expect(await listed(t.users.authority)).toEqual([]);
  });
});

describe('a removal date takes effect at its instant, at request time', () => {
  let dir: string;
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'registry-schemes-'));
    const file = join(dir, 'participant-identifier-schemes.xml');
    await writeFile(
      file,
      `<participant-identifier-schemes version="99.1">
      <participant-identifier-scheme schemeid="NO:ORG" iso6523="0192" country="NO" scheme-name="Organisasjonsnummer" state="deprecated" removal-date="${tomorrow}">
        <validation-rules>RegEx: [0-9]{9}</validation-rules><examples>745707327</examples>
      </participant-identifier-scheme>
    </participant-identifier-schemes>`,
    );
    const report = await loadList(file);
    expect(report.schemeChanges).toEqual([
      `0192: state active → deprecated, removal date none → ${tomorrow}, validation rules changed`,
    ]);
  });
  afterEach(() => vi.useRealTimers());
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('takes the ICD with a warning until the day, and refuses it from the UTC start of that day', async () => {
    const before = await register({});
    expect(before.statusCode, before.body).toBe(201);
    expect(before.headers.warning).toBe(
      `299 registry "ICD 0192 is deprecated in the Peppol code list and will be removed on ${tomorrow}, from when it takes no new participants"`,
    );

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(`${tomorrow}T00:00:00Z`));
    const body = expectErrorBody(await register({}), 400);
    expect(expectFieldError(body, ADD_FORM, 'icd', 'IcdRemoved').defaultMessage).toBe(
      `ICD 0192 was removed from the Peppol code list on ${tomorrow}: no new participants`,
    );
  });
});
