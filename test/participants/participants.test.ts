import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { expectErrorBody, expectFieldError, expectSecurityHeaders, notNullEntry } from '../helpers/assertions.js';
import { addProcess, processForm, whileDeleting } from '../helpers/catalogue.js';
import { testDatabaseKind } from '../helpers/database.js';
import {
  addParticipant,
  byQualified,
  dayFromToday,
  participantForm,
  PARTICIPANTS,
  SCHEME,
  today,
  uniqueOrganization,
  type Participant,
} from '../helpers/participants.js';
import { call } from '../helpers/requests.js';
import { gln } from '../helpers/organization-numbers.js';

const t = useTestApp();

const vendor = (operation: string) => `application/vnd.registry.${operation}.v1+json`;
const organizationNotFound = (qualifiedIdentifier: string) => `Couldn't find organization for ${qualifiedIdentifier}`;

/** Pretends the participant was registered and last changed some days ago. */
async function backdate(identifier: string, days = 10): Promise<string> {
  const day = dayFromToday(-days);
  await t.db.query('UPDATE participants SET registration_date = $2, last_modification_date = $2 WHERE id = $1', [
    identifier,
    day,
  ]);
  return day;
}

describe('add participant', () => {
  it('creates the participant and answers 201 with it, processes, provider and dates included', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const response = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.serviceProvider,
      headers: { accept: vendor('participants.add'), 'content-type': vendor('participants.add') },
      payload: participantForm({
        icd: '9909',
        organizationIdentifier: 'NO987654325MVA',
        organizationPartIdentifier: 'dept-7',
        sourceIndicator: '3',
        processes: [{ identifier: process.identifier }],
      }),
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.headers['content-type']).toBe(`${vendor('participants.add')};charset=UTF-8`);
    expectSecurityHeaders(response);
    const body = response.json();
    expect(body).toEqual({
      identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
      qualifiedIdentifier: `${SCHEME}::9909:no987654325mva`,
      icd: '9909',
      organizationIdentifier: 'no987654325mva',
      organizationPartIdentifier: 'dept-7',
      sourceIndicator: '3',
      name: 'Acme Shipping AS',
      registrationDate: today(),
      lastModificationDate: today(),
      deleteDate: null,
      contact: { name: 'Kari Nordmann', email: 'kari@acme.example', phoneNumber: '+47 22 00 00 00' },
      provider: { identifier: t.fixture.serviceProviderId, title: 'Provider One' },
      processes: [
        expect.objectContaining({ identifier: process.identifier, qualifiedIdentifier: process.qualifiedIdentifier }),
      ],
    });
    const stored = await call(t.app, { url: `${PARTICIPANTS}/${body.identifier}`, user: t.users.serviceProvider });
    expect(stored.json()).toEqual(body);
  });

  it('takes processes by qualified identifier, as a string or an object', async () => {
    const [first, second] = [await addProcess(t.app, t.users.admin), await addProcess(t.app, t.users.admin)];
    const [scheme, value] = second.qualifiedIdentifier.split('::');
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ qualifiedIdentifier: first.qualifiedIdentifier }, { qualifiedIdentifier: { scheme, value } }],
    });
    expect((participant.processes as Participant[]).map((process) => process.identifier).sort()).toEqual(
      [first.identifier, second.identifier].sort(),
    );
  });

  it('keeps optional fields empty when they are not given, and accepts a contact with a name only', async () => {
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      name: undefined,
      contact: { name: 'Ola' },
      organizationPartIdentifier: '',
    });
    expect(participant).toMatchObject({
      name: null,
      sourceIndicator: null,
      organizationPartIdentifier: '',
      processes: [],
      contact: { name: 'Ola', email: null, phoneNumber: null },
    });
  });

  it('accepts a future deleteDate (extension) and returns it', async () => {
    const deleteDate = dayFromToday(30);
    const participant = await addParticipant(t.app, t.users.serviceProvider, { deleteDate });
    expect(participant.deleteDate).toBe(deleteDate);
  });

  it('answers the 400 body of the specification, field for field, when contact is missing', async () => {
    const form = participantForm();
    delete form.contact;
    const response = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.serviceProvider,
      payload: form,
    });
    const body = expectErrorBody(response, 400, "Validation failed for object='addParticipantFormDTO'. Error count: 1");
    expect(body).toMatchObject({ error: 'Bad Request', path: PARTICIPANTS });
    expect(body.errors).toEqual([notNullEntry('addParticipantFormDTO', 'contact', 'ContactForm')]);
  });

  it('reports a null contact like a missing one', async () => {
    const response = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.serviceProvider,
      payload: participantForm({ contact: null }),
    });
    const body = expectErrorBody(response, 400, "Validation failed for object='addParticipantFormDTO'. Error count: 1");
    expectFieldError(body, 'addParticipantFormDTO', 'contact', 'NotNull', 'must not be null');
  });

  it.each([
    ['icd', { icd: '1234' }, 'icd', 'Icd'],
    ['icd', { icd: undefined }, 'icd', 'NotNull'],
    ['organizationIdentifier', { organizationIdentifier: '' }, 'organizationIdentifier', 'Size'],
    ['organizationIdentifier', { organizationIdentifier: 'x'.repeat(36) }, 'organizationIdentifier', 'Size'],
    ['organizationIdentifier', { organizationIdentifier: undefined }, 'organizationIdentifier', 'NotNull'],
    [
      'organizationPartIdentifier',
      { organizationPartIdentifier: 'y'.repeat(36) },
      'organizationPartIdentifier',
      'Size',
    ],
    ['sourceIndicator', { sourceIndicator: 'a' }, 'sourceIndicator', 'Pattern'],
    ['sourceIndicator', { sourceIndicator: '12' }, 'sourceIndicator', 'Size'],
    ['contact name', { contact: { name: '' } }, 'contact.name', 'NotEmpty'],
    ['contact name', { contact: { email: 'a@b.example' } }, 'contact.name', 'NotEmpty'],
    ['contact e-mail', { contact: { name: 'Ola', email: 'not-an-address' } }, 'contact.email', 'Email'],
    ['processes', { processes: undefined }, 'processes', 'NotNull'],
    ['processes', { processes: [{ identifier: randomUUID() }] }, 'processes[0]', 'NotFound'],
    [
      'processes',
      { processes: [{ qualifiedIdentifier: 'cenbii-procid-ubl::nothing-here' }] },
      'processes[0]',
      'NotFound',
    ],
    ['deleteDate', { deleteDate: dayFromToday(-1) }, 'deleteDate', 'Future'],
    ['deleteDate', { deleteDate: today() }, 'deleteDate', 'Future'],
    ['deleteDate', { deleteDate: '31.12.2030' }, 'deleteDate', 'typeMismatch'],
  ])('refuses an invalid %s: %j gives %s %s', async (_name, overrides, field, code) => {
    const response = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.serviceProvider,
      payload: participantForm(overrides),
    });
    const body = expectErrorBody(
      response,
      400,
      /^Validation failed for object='addParticipantFormDTO'\. Error count: \d+$/,
    );
    expectFieldError(body, 'addParticipantFormDTO', field, code);
  });

  it('accepts the limits themselves: 35 characters, an empty part identifier, one digit', async () => {
    // 9922 (AD:VAT) has no rule of its own: only the specification's bounds apply.
    const organizationIdentifier = `a${uniqueOrganization()}`.padEnd(35, '0');
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      icd: '9922',
      organizationIdentifier,
      organizationPartIdentifier: 'p'.repeat(35),
      sourceIndicator: '0',
    });
    expect(participant.organizationIdentifier).toBe(organizationIdentifier);
  });

  it('refuses a name longer than 255 characters with a Size entry, and keeps one of 255 of any script', async () => {
    const response = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.serviceProvider,
      payload: participantForm({ name: 'é'.repeat(256) }),
    });
    const body = expectErrorBody(response, 400, "Validation failed for object='addParticipantFormDTO'. Error count: 1");
    expectFieldError(body, 'addParticipantFormDTO', 'name', 'Size', 'size must be between 0 and 255');
    const longest = await addParticipant(t.app, t.users.serviceProvider, { name: '漢'.repeat(255) });
    expect(longest.name).toBe('漢'.repeat(255));
  });

  it('lists every violation at once', async () => {
    const response = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.serviceProvider,
      payload: { icd: '12', organizationIdentifier: '', sourceIndicator: 'x', processes: [] },
    });
    const body = expectErrorBody(response, 400, "Validation failed for object='addParticipantFormDTO'. Error count: 4");
    expect(body.errors.map((entry: { field: string }) => entry.field).sort()).toEqual([
      'contact',
      'icd',
      'organizationIdentifier',
      'sourceIndicator',
    ]);
  });

  describe('process rules', () => {
    it('refuses a restricted process, naming it', async () => {
      const restricted = await addProcess(t.app, t.users.admin, { restricted: true });
      const response = await call(t.app, {
        method: 'POST',
        url: PARTICIPANTS,
        user: t.users.serviceProvider,
        payload: participantForm({ processes: [{ identifier: restricted.identifier }] }),
      });
      const body = expectErrorBody(response, 400);
      const entry = expectFieldError(body, 'addParticipantFormDTO', 'processes[0]', 'Restricted');
      expect(entry.defaultMessage).toContain(restricted.qualifiedIdentifier);
      expect(entry.codes).toContain('Restricted.ProcessIdentifiable');
    });

    it("refuses a process whose required ICDs do not contain the participant's ICD, and accepts one that does", async () => {
      const process = await addProcess(t.app, t.users.admin, { requiredICDs: ['0007', '0088'] });
      const refused = await call(t.app, {
        method: 'POST',
        url: PARTICIPANTS,
        user: t.users.serviceProvider,
        payload: participantForm({ icd: '0192', processes: [{ identifier: process.identifier }] }),
      });
      const entry = expectFieldError(
        expectErrorBody(refused, 400),
        'addParticipantFormDTO',
        'processes[0]',
        'RequiredIcd',
      );
      expect(entry.defaultMessage).toContain(process.qualifiedIdentifier);
      await addParticipant(t.app, t.users.serviceProvider, {
        icd: '0088',
        organizationIdentifier: gln(uniqueOrganization().padEnd(12, '0')),
        processes: [{ identifier: process.identifier }],
      });
    });

    it('refuses a process whose dependencies the participant does not have, and accepts it with them', async () => {
      const dependency = await addProcess(t.app, t.users.admin);
      const dependent = await addProcess(t.app, t.users.admin, {
        dependencies: [{ identifier: dependency.identifier }],
      });
      const refused = await call(t.app, {
        method: 'POST',
        url: PARTICIPANTS,
        user: t.users.serviceProvider,
        payload: participantForm({ processes: [{ identifier: randomUUID() }, { identifier: dependent.identifier }] }),
      });
      const body = expectErrorBody(
        refused,
        400,
        "Validation failed for object='addParticipantFormDTO'. Error count: 2",
      );
      expectFieldError(body, 'addParticipantFormDTO', 'processes[0]', 'NotFound');
      const entry = expectFieldError(body, 'addParticipantFormDTO', 'processes[1]', 'MissingDependency');
      expect(entry.defaultMessage).toContain(dependent.qualifiedIdentifier);
      expect(entry.defaultMessage).toContain(dependency.qualifiedIdentifier);
      const accepted = await addParticipant(t.app, t.users.serviceProvider, {
        processes: [{ identifier: dependent.identifier }, { identifier: dependency.identifier }],
      });
      expect(accepted.processes).toHaveLength(2);
    });
  });
});

describe('get participant', () => {
  let participant: Participant;
  beforeAll(async () => {
    // A Norwegian VAT number: the letters of a mixed-case value around a valid organization number.
    participant = await addParticipant(t.app, t.users.serviceProvider, {
      icd: '9909',
      organizationIdentifier: `No${uniqueOrganization()}Mva`,
    });
  });

  it.each([
    ['percent-encoded', (qualified: string) => byQualified(qualified)],
    ['raw', (qualified: string) => `${PARTICIPANTS}/${qualified}`],
    ['upper case', (qualified: string) => byQualified(qualified.toUpperCase())],
  ])('finds it by its qualified identifier, %s', async (_kind, path) => {
    const response = await call(t.app, {
      url: path(participant.qualifiedIdentifier),
      user: t.users.serviceProvider,
      headers: { accept: vendor('participants.get') },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe(`${vendor('participants.get')};charset=UTF-8`);
    expect(response.json()).toEqual(participant);
  });

  it.each(['serviceProvider', 'admin', 'authority'] as const)('finds it by UUID for %s', async (role) => {
    const response = await call(t.app, {
      url: `${PARTICIPANTS}/${participant.identifier.toUpperCase()}`,
      user: t.users[role],
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual(participant);
  });

  it('answers the participant 404 body for an unknown qualified identifier, a malformed one and an unknown UUID', async () => {
    for (const segment of [
      `${SCHEME}::0192:${uniqueOrganization()}`,
      'not-a-qualified-identifier',
      `${SCHEME}::1234:bad-icd`,
      `other-scheme::0192:x`,
    ]) {
      const url = byQualified(segment);
      const body = expectErrorBody(
        await call(t.app, { url, user: t.users.serviceProvider }),
        404,
        organizationNotFound(segment),
      );
      expect(body.path).toBe(url);
      expect(body.errors).toBeUndefined();
    }
    const unknown = randomUUID();
    expectErrorBody(
      await call(t.app, { url: `${PARTICIPANTS}/${unknown}`, user: t.users.admin }),
      404,
      organizationNotFound(unknown),
    );
  });
});

describe('update participant', () => {
  it('replaces contact and processes, keeps the registration date and sets lastModificationDate to today', async () => {
    const [kept, dropped, added] = [
      await addProcess(t.app, t.users.admin),
      await addProcess(t.app, t.users.admin),
      await addProcess(t.app, t.users.admin),
    ];
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: kept.identifier }, { identifier: dropped.identifier }],
    });
    const registered = await backdate(participant.identifier);
    const response = await call(t.app, {
      method: 'PUT',
      url: byQualified(participant.qualifiedIdentifier),
      user: t.users.serviceProvider,
      headers: { accept: vendor('participants.update'), 'content-type': vendor('participants.update') },
      payload: {
        contact: { name: 'Per Hansen', email: 'per@acme.example' },
        processes: [{ identifier: kept.identifier }, { identifier: added.identifier }],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe(`${vendor('participants.update')};charset=UTF-8`);
    const body = response.json();
    expect(body).toMatchObject({
      identifier: participant.identifier,
      registrationDate: registered,
      lastModificationDate: today(),
      contact: { name: 'Per Hansen', email: 'per@acme.example', phoneNumber: null },
      name: participant.name,
    });
    expect(body.processes.map((process: Participant) => process.identifier).sort()).toEqual(
      [kept.identifier, added.identifier].sort(),
    );
  });

  it('also takes the UUID path, sets and clears deleteDate', async () => {
    const participant = await addParticipant(t.app, t.users.serviceProvider);
    const deleteDate = dayFromToday(10);
    const set = await call(t.app, {
      method: 'PUT',
      url: `${PARTICIPANTS}/${participant.identifier}`,
      user: t.users.serviceProvider,
      payload: { contact: { name: 'Ola' }, processes: [], deleteDate },
    });
    expect(set.json().deleteDate).toBe(deleteDate);
    const cleared = await call(t.app, {
      method: 'PUT',
      url: `${PARTICIPANTS}/${participant.identifier}`,
      user: t.users.serviceProvider,
      payload: { contact: { name: 'Ola' }, processes: [] },
    });
    expect(cleared.json().deleteDate).toBeNull();
  });

  it("answers the specification's 400 body when contact is missing", async () => {
    const participant = await addParticipant(t.app, t.users.serviceProvider);
    const response = await call(t.app, {
      method: 'PUT',
      url: byQualified(participant.qualifiedIdentifier),
      user: t.users.serviceProvider,
      payload: { processes: [] },
    });
    const body = expectErrorBody(
      response,
      400,
      "Validation failed for object='updateParticipantFormDTO'. Error count: 1",
    );
    expect(body.errors).toEqual([notNullEntry('updateParticipantFormDTO', 'contact', 'ContactForm')]);
  });

  it('keeps a process that became restricted, but refuses to add a restricted one', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: process.identifier }],
    });
    const restricted = await call(t.app, {
      method: 'PUT',
      url: `/rest/api/processes/${process.identifier}`,
      user: t.users.admin,
      payload: processForm({ qualifiedIdentifier: process.qualifiedIdentifier, restricted: true }),
    });
    expect(restricted.statusCode, restricted.body).toBe(200);
    const kept = await call(t.app, {
      method: 'PUT',
      url: byQualified(participant.qualifiedIdentifier),
      user: t.users.serviceProvider,
      payload: { contact: { name: 'Ola' }, processes: [{ identifier: process.identifier }] },
    });
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json().processes[0].restricted).toBe(true);

    const other = await addParticipant(t.app, t.users.serviceProvider);
    const refused = await call(t.app, {
      method: 'PUT',
      url: byQualified(other.qualifiedIdentifier),
      user: t.users.serviceProvider,
      payload: { contact: { name: 'Ola' }, processes: [{ identifier: process.identifier }] },
    });
    expectFieldError(expectErrorBody(refused, 400), 'updateParticipantFormDTO', 'processes[0]', 'Restricted');
  });

  it('answers the participant 404 body for an unknown participant', async () => {
    const qualified = `${SCHEME}::0192:${uniqueOrganization()}`;
    const response = await call(t.app, {
      method: 'PUT',
      url: byQualified(qualified),
      user: t.users.serviceProvider,
      payload: { contact: { name: 'Ola' }, processes: [] },
    });
    expectErrorBody(response, 404, organizationNotFound(qualified));
  });
});

describe('delete participant', () => {
  it('deletes by qualified identifier with 204, after which it is gone', async () => {
    const participant = await addParticipant(t.app, t.users.serviceProvider);
    const response = await call(t.app, {
      method: 'DELETE',
      url: byQualified(participant.qualifiedIdentifier),
      user: t.users.serviceProvider,
      headers: { accept: vendor('participants.delete') },
    });
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expectErrorBody(
      await call(t.app, { url: byQualified(participant.qualifiedIdentifier), user: t.users.serviceProvider }),
      404,
    );
    expectErrorBody(
      await call(t.app, {
        method: 'DELETE',
        url: byQualified(participant.qualifiedIdentifier),
        user: t.users.serviceProvider,
      }),
      404,
      organizationNotFound(participant.qualifiedIdentifier),
    );
  });

  it('deletes by UUID for its provider and for ADMIN', async () => {
    for (const user of [t.users.serviceProvider, t.users.admin]) {
      const participant = await addParticipant(t.app, t.users.serviceProvider);
      expect(
        (await call(t.app, { method: 'DELETE', url: `${PARTICIPANTS}/${participant.identifier}`, user })).statusCode,
      ).toBe(204);
      expectErrorBody(
        await call(t.app, { url: `${PARTICIPANTS}/${participant.identifier}`, user: t.users.admin }),
        404,
      );
    }
  });

  it("frees the organization's processes for another provider", async () => {
    const process = await addProcess(t.app, t.users.admin);
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: process.identifier }],
    });
    await call(t.app, {
      method: 'DELETE',
      url: byQualified(participant.qualifiedIdentifier),
      user: t.users.serviceProvider,
    });
    await addParticipant(t.app, t.users.otherServiceProvider, {
      organizationIdentifier: participant.organizationIdentifier,
      processes: [{ identifier: process.identifier }],
    });
  });
});

describe('participant processes', () => {
  it("lists the participant's processes by qualified identifier and by UUID", async () => {
    const [first, second] = [await addProcess(t.app, t.users.admin), await addProcess(t.app, t.users.admin)];
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: first.identifier }, { identifier: second.identifier }],
    });
    const expected = [first, second].sort((a, b) => (a.qualifiedIdentifier < b.qualifiedIdentifier ? -1 : 1));
    for (const [url, user] of [
      [byQualified(participant.qualifiedIdentifier, '/processes'), t.users.serviceProvider],
      [`${PARTICIPANTS}/${participant.identifier}/processes`, t.users.authority],
    ] as const) {
      const response = await call(t.app, { url, user, headers: { accept: vendor('participants.processes') } });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['content-type']).toBe(`${vendor('participants.processes')};charset=UTF-8`);
      expect(response.json()).toEqual(expected);
    }
  });

  it('answers the participant 404 body for an unknown participant', async () => {
    const qualified = `${SCHEME}::0192:${uniqueOrganization()}`;
    expectErrorBody(
      await call(t.app, { url: byQualified(qualified, '/processes'), user: t.users.serviceProvider }),
      404,
      organizationNotFound(qualified),
    );
  });
});

describe('conflicts', () => {
  it('allows one participant per organization and provider (409), whatever the case of the identifier', async () => {
    const organizationIdentifier = uniqueOrganization();
    await addParticipant(t.app, t.users.serviceProvider, { organizationIdentifier });
    const response = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.serviceProvider,
      payload: participantForm({ organizationIdentifier: organizationIdentifier.toUpperCase() }),
    });
    const body = expectErrorBody(response, 409);
    expect(body).toMatchObject({ error: 'Conflict' });
    expect(body.message).toContain(`${SCHEME}::0192:${organizationIdentifier}`);
    await addParticipant(t.app, t.users.otherServiceProvider, { organizationIdentifier });
  });

  it('gives one process of an organization to one provider only (409 naming the process), and writes nothing', async () => {
    const [shared, free] = [await addProcess(t.app, t.users.admin), await addProcess(t.app, t.users.admin)];
    const organizationIdentifier = uniqueOrganization();
    await addParticipant(t.app, t.users.serviceProvider, {
      organizationIdentifier,
      processes: [{ identifier: shared.identifier }],
    });
    const response = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.otherServiceProvider,
      payload: participantForm({
        organizationIdentifier,
        processes: [{ identifier: free.identifier }, { identifier: shared.identifier }],
      }),
    });
    const body = expectErrorBody(response, 409);
    expect(body.message).toContain(shared.qualifiedIdentifier);
    expect(body.message).not.toContain(free.qualifiedIdentifier);
    expectErrorBody(
      await call(t.app, {
        url: byQualified(`${SCHEME}::0192:${organizationIdentifier}`),
        user: t.users.otherServiceProvider,
      }),
      404,
    );

    const second = await addParticipant(t.app, t.users.otherServiceProvider, {
      organizationIdentifier,
      processes: [{ identifier: free.identifier }],
    });
    const update = await call(t.app, {
      method: 'PUT',
      url: byQualified(second.qualifiedIdentifier),
      user: t.users.otherServiceProvider,
      payload: { contact: { name: 'Changed' }, processes: [{ identifier: shared.identifier }] },
    });
    expect(expectErrorBody(update, 409).message).toContain(shared.qualifiedIdentifier);
    const unchanged = (
      await call(t.app, { url: byQualified(second.qualifiedIdentifier), user: t.users.otherServiceProvider })
    ).json();
    expect(unchanged.contact.name).toBe('Kari Nordmann');
    expect(unchanged.processes.map((process: Participant) => process.identifier)).toEqual([free.identifier]);
  });

  it('lets exactly one of many simultaneous adds of the same organization win', async () => {
    const form = participantForm();
    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        call(t.app, { method: 'POST', url: PARTICIPANTS, user: t.users.serviceProvider, payload: form }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(11);
    const [count] = await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM participants WHERE organization_identifier = $1',
      [form.organizationIdentifier],
    );
    expect(count?.n).toBe(1);
  });

  // Needs a second connection holding the delete open, which only the PostgreSQL server gives.
  it.runIf(testDatabaseKind === 'postgres')(
    'answers 409, not 500, when a named process is deleted while the participant is added',
    async () => {
      const process = await addProcess(t.app, t.users.admin);
      const form = participantForm({ processes: [{ identifier: process.identifier }] });
      const adding = whileDeleting(t.db, 'DELETE FROM processes WHERE id = $1', [process.identifier], () =>
        call(t.app, { method: 'POST', url: PARTICIPANTS, user: t.users.serviceProvider, payload: form }),
      );
      expectErrorBody(await adding, 409, 'A process named in processes was deleted meanwhile; nothing was changed');
      expectErrorBody(
        await call(t.app, {
          url: byQualified(`${SCHEME}::0192:${form.organizationIdentifier}`),
          user: t.users.serviceProvider,
        }),
        404,
      );
    },
  );

  it('lets one of two providers racing for the same process of an organization win', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const organizationIdentifier = uniqueOrganization();
    const responses = await Promise.all(
      [t.users.serviceProvider, t.users.otherServiceProvider].map((user) =>
        call(t.app, {
          method: 'POST',
          url: PARTICIPANTS,
          user,
          payload: participantForm({ organizationIdentifier, processes: [{ identifier: process.identifier }] }),
        }),
      ),
    );
    expect(responses.map((response) => response.statusCode).sort()).toEqual([201, 409]);
  });
});

describe('ownership', () => {
  let mine: Participant;
  beforeAll(async () => {
    mine = await addParticipant(t.app, t.users.serviceProvider);
  });

  it.each([
    ['get by UUID', () => ({ url: `${PARTICIPANTS}/${mine.identifier}` })],
    ['get by qualified identifier', () => ({ url: byQualified(mine.qualifiedIdentifier) })],
    [
      'update',
      () => ({
        method: 'PUT' as const,
        url: byQualified(mine.qualifiedIdentifier),
        payload: { contact: { name: 'Thief' }, processes: [] },
      }),
    ],
    [
      'update by UUID',
      () => ({
        method: 'PUT' as const,
        url: `${PARTICIPANTS}/${mine.identifier}`,
        payload: { contact: { name: 'Thief' }, processes: [] },
      }),
    ],
    ['delete by UUID', () => ({ method: 'DELETE' as const, url: `${PARTICIPANTS}/${mine.identifier}` })],
    [
      'delete by qualified identifier',
      () => ({ method: 'DELETE' as const, url: byQualified(mine.qualifiedIdentifier) }),
    ],
    ['processes by UUID', () => ({ url: `${PARTICIPANTS}/${mine.identifier}/processes` })],
    [
      'transfer',
      () => ({
        method: 'PUT' as const,
        url: byQualified(mine.qualifiedIdentifier, `/transfer/${t.fixture.otherServiceProviderId}`),
      }),
    ],
  ])('another provider gets the participant 404 body on %s, and nothing changes', async (_operation, request) => {
    const { url, ...rest } = request();
    const segment = decodeURIComponent(url.slice(PARTICIPANTS.length + 1).split('/')[0] as string);
    expectErrorBody(
      await call(t.app, { url, ...rest, user: t.users.otherServiceProvider }),
      404,
      organizationNotFound(segment),
    );
    const still = await call(t.app, { url: `${PARTICIPANTS}/${mine.identifier}`, user: t.users.serviceProvider });
    expect(still.json()).toEqual(mine);
  });

  it('another provider does not find it in a search', async () => {
    const response = await call(t.app, {
      url: `${PARTICIPANTS}?query=${mine.organizationIdentifier}`,
      user: t.users.otherServiceProvider,
    });
    expect(response.json().totalElements).toBe(0);
    const own = await call(t.app, {
      url: `${PARTICIPANTS}?query=${mine.organizationIdentifier}`,
      user: t.users.serviceProvider,
    });
    expect(own.json().content).toEqual([expect.objectContaining({ identifier: mine.identifier })]);
  });
});

describe('transfer', () => {
  const transfer = (participant: Participant, target: string, user = t.users.serviceProvider) =>
    call(t.app, {
      method: 'PUT',
      url: byQualified(participant.qualifiedIdentifier, `/transfer/${target}`),
      user,
      headers: { accept: vendor('participants.transfer') },
    });

  it('moves the participant with contact and processes to the target provider, 200 without body', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: process.identifier }],
    });
    await backdate(participant.identifier);
    const response = await transfer(participant, t.fixture.otherServiceProviderId);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.body).toBe('');
    expectSecurityHeaders(response);

    expectErrorBody(
      await call(t.app, { url: byQualified(participant.qualifiedIdentifier), user: t.users.serviceProvider }),
      404,
    );
    const moved = (
      await call(t.app, { url: byQualified(participant.qualifiedIdentifier), user: t.users.otherServiceProvider })
    ).json();
    expect(moved).toMatchObject({
      identifier: participant.identifier,
      contact: participant.contact,
      provider: { identifier: t.fixture.otherServiceProviderId, title: 'Provider Two' },
      lastModificationDate: today(),
      processes: [expect.objectContaining({ identifier: process.identifier })],
    });
    expect(moved.registrationDate).not.toBe(today());
  });

  it('answers 404 with the instance body for an unknown target, and 400 for a target that is no UUID', async () => {
    const participant = await addParticipant(t.app, t.users.serviceProvider);
    const unknown = randomUUID();
    expectErrorBody(await transfer(participant, unknown), 404, `Unable to find instance with identifier '${unknown}'.`);
    expectFieldError(
      expectErrorBody(await transfer(participant, 'provider-two'), 400),
      'pathVariables',
      'serviceProviderIdentifier',
      'typeMismatch',
    );
  });

  it('answers 409 when the target already has the organization, or is the owner itself', async () => {
    const organizationIdentifier = uniqueOrganization();
    const participant = await addParticipant(t.app, t.users.serviceProvider, { organizationIdentifier });
    await addParticipant(t.app, t.users.otherServiceProvider, { organizationIdentifier });
    expectErrorBody(await transfer(participant, t.fixture.otherServiceProviderId), 409);
    expectErrorBody(await transfer(participant, t.fixture.serviceProviderId), 409);
    const unchanged = (
      await call(t.app, { url: byQualified(participant.qualifiedIdentifier), user: t.users.serviceProvider })
    ).json();
    expect(unchanged.provider.identifier).toBe(t.fixture.serviceProviderId);
  });

  it('answers the participant 404 body for an unknown participant', async () => {
    const qualified = `${SCHEME}::0192:${uniqueOrganization()}`;
    const response = await call(t.app, {
      method: 'PUT',
      url: byQualified(qualified, `/transfer/${t.fixture.otherServiceProviderId}`),
      user: t.users.serviceProvider,
    });
    expectErrorBody(response, 404, organizationNotFound(qualified));
  });
});

describe('deleteDate', () => {
  async function expire(participant: Participant, daysAgo: number) {
    await t.db.query('UPDATE participants SET delete_date = $2 WHERE id = $1', [
      participant.identifier,
      dayFromToday(-daysAgo),
    ]);
    // The day came past the API and its change log: the search in memory reads it as a restart would.
    await t.app.heldParticipants.load();
  }

  it('removes a participant from every answer once its delete date has come', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: process.identifier }],
      deleteDate: dayFromToday(5),
    });
    expect(
      (await call(t.app, { url: byQualified(participant.qualifiedIdentifier), user: t.users.serviceProvider }))
        .statusCode,
    ).toBe(200);
    await expire(participant, 0);
    const gone = organizationNotFound(participant.qualifiedIdentifier);
    expectErrorBody(
      await call(t.app, { url: byQualified(participant.qualifiedIdentifier), user: t.users.serviceProvider }),
      404,
      gone,
    );
    expectErrorBody(await call(t.app, { url: `${PARTICIPANTS}/${participant.identifier}`, user: t.users.admin }), 404);
    expectErrorBody(
      await call(t.app, {
        url: byQualified(participant.qualifiedIdentifier, '/processes'),
        user: t.users.serviceProvider,
      }),
      404,
    );
    expectErrorBody(
      await call(t.app, {
        method: 'DELETE',
        url: byQualified(participant.qualifiedIdentifier),
        user: t.users.serviceProvider,
      }),
      404,
    );
    expectErrorBody(
      await call(t.app, {
        url: `/rest/api/organizations/${encodeURIComponent(participant.qualifiedIdentifier)}/processes`,
      }),
      404,
    );
    const search = await call(t.app, {
      url: `${PARTICIPANTS}?query=${participant.organizationIdentifier}`,
      user: t.users.admin,
    });
    expect(search.json().totalElements).toBe(0);
    const stream = await call(t.app, {
      url: `${PARTICIPANTS}?query=${participant.organizationIdentifier}`,
      user: t.users.admin,
      headers: { accept: vendor('participants.stream') },
    });
    expect(stream.json()).toEqual([]);
  });

  it('does not block a new registration of the organization, with the same processes', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: process.identifier }],
    });
    await expire(participant, 3);
    const again = await addParticipant(t.app, t.users.serviceProvider, {
      organizationIdentifier: participant.organizationIdentifier,
      processes: [{ identifier: process.identifier }],
    });
    expect(again.identifier).not.toBe(participant.identifier);
    await expire(again, 1);
    await addParticipant(t.app, t.users.otherServiceProvider, {
      organizationIdentifier: participant.organizationIdentifier,
      processes: [{ identifier: process.identifier }],
    });
  });
});

describe('roles', () => {
  let participant: Participant;
  beforeAll(async () => {
    participant = await addParticipant(t.app, t.users.serviceProvider);
  });
  const byUuid = (suffix = '') => `${PARTICIPANTS}/${participant.identifier}${suffix}`;
  const byName = (suffix = '') => byQualified(participant.qualifiedIdentifier, suffix);
  const contactOnly = { contact: { name: 'Ola' }, processes: [] };

  type Operation = [
    string,
    () => { method?: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; payload?: unknown },
    string[],
  ];
  const roles = ['serviceProvider', 'accessPointProvider', 'admin', 'authority'] as const;
  const operations: Operation[] = [
    ['find', () => ({ url: PARTICIPANTS }), ['serviceProvider', 'admin', 'authority']],
    ['get by qualified identifier', () => ({ url: byName() }), ['serviceProvider']],
    ['get by UUID', () => ({ url: byUuid() }), ['serviceProvider', 'admin', 'authority']],
    ['add', () => ({ method: 'POST', url: PARTICIPANTS, payload: participantForm() }), ['serviceProvider']],
    ['update', () => ({ method: 'PUT', url: byName(), payload: contactOnly }), ['serviceProvider']],
    ['processes by qualified identifier', () => ({ url: byName('/processes') }), ['serviceProvider']],
    ['processes by UUID', () => ({ url: byUuid('/processes') }), ['serviceProvider', 'admin', 'authority']],
  ];

  it.each(operations)('%s: allowed exactly for its roles, 401 without credentials', async (_name, request, allowed) => {
    for (const role of roles) {
      const response = await call(t.app, { ...request(), user: t.users[role] });
      if (allowed.includes(role)) expect(response.statusCode, `${role}: ${response.body}`).toBeLessThan(300);
      else expectErrorBody(response, 403);
    }
    const anonymous = await call(t.app, request());
    expectErrorBody(anonymous, 401);
    expect(anonymous.headers['www-authenticate']).toBe('Basic realm="registry"');
  });

  it.each([
    ['delete by qualified identifier', byName, ['serviceProvider']],
    ['delete by UUID', byUuid, ['serviceProvider', 'admin']],
  ] as const)('%s: allowed exactly for its roles', async (_name, url, allowed) => {
    for (const role of roles) {
      participant = await addParticipant(t.app, t.users.serviceProvider);
      const response = await call(t.app, { method: 'DELETE', url: url(), user: t.users[role] });
      if ((allowed as readonly string[]).includes(role)) expect(response.statusCode, role).toBe(204);
      else expectErrorBody(response, 403);
    }
    expectErrorBody(await call(t.app, { method: 'DELETE', url: url() }), 401);
  });

  it('transfer: service providers only', async () => {
    const url = () => byName(`/transfer/${t.fixture.otherServiceProviderId}`);
    for (const role of ['accessPointProvider', 'admin', 'authority'] as const) {
      expectErrorBody(await call(t.app, { method: 'PUT', url: url(), user: t.users[role] }), 403);
    }
    expectErrorBody(await call(t.app, { method: 'PUT', url: url() }), 401);
    expect((await call(t.app, { method: 'PUT', url: url(), user: t.users.serviceProvider })).statusCode).toBe(200);
  });
});

describe('media types', () => {
  it('answers plain JSON when asked for it, 406 for anything else, 415 for a body type it does not take', async () => {
    const participant = await addParticipant(t.app, t.users.serviceProvider);
    const json = await call(t.app, {
      url: byQualified(participant.qualifiedIdentifier),
      user: t.users.serviceProvider,
      headers: { accept: 'application/json' },
    });
    expect(json.headers['content-type']).toBe('application/json;charset=UTF-8');
    expectErrorBody(
      await call(t.app, {
        url: byQualified(participant.qualifiedIdentifier),
        user: t.users.serviceProvider,
        headers: { accept: 'text/html' },
      }),
      406,
    );
    expectErrorBody(
      await call(t.app, {
        url: byQualified(participant.qualifiedIdentifier),
        user: t.users.serviceProvider,
        headers: { accept: vendor('processes.get') },
      }),
      406,
    );
    const wrongBody = await call(t.app, {
      method: 'POST',
      url: PARTICIPANTS,
      user: t.users.serviceProvider,
      payload: JSON.stringify(participantForm()),
      headers: { 'content-type': vendor('participants.update') },
    });
    expectErrorBody(wrongBody, 415);
  });

  it('answers the versioned type by default', async () => {
    const response = await call(t.app, { url: PARTICIPANTS, user: t.users.admin });
    expect(response.headers['content-type']).toBe(`${vendor('participants.find')};charset=UTF-8`);
  });
});
