import type { Counter } from 'prom-client';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { participantsHeld, useTestApp } from '../helpers/app.js';
import { expectErrorBody, expectPublicReadHeaders } from '../helpers/assertions.js';
import { addProcess } from '../helpers/catalogue.js';
import {
  addParticipant,
  byQualified,
  dayFromToday,
  participantForm,
  SCHEME,
  today,
  uniqueOrganization,
} from '../helpers/participants.js';
import { call } from '../helpers/requests.js';
import { HeldParticipants } from '../../src/participants/held-participants.js';

const t = useTestApp();

const url = (qualifiedIdentifier: string) =>
  `/rest/api/organizations/${encodeURIComponent(qualifiedIdentifier)}/processes`;
const vendor = (name: string) => `application/vnd.registry.${name}.v1+json`;

describe('organization processes', () => {
  let organizationIdentifier: string;
  let qualified: string;
  let expected: Array<{ identifier: string; qualifiedIdentifier: string }>;

  beforeAll(async () => {
    const { admin, serviceProvider, otherServiceProvider } = t.users;
    const [first, second, third, unused] = await Promise.all([1, 2, 3, 4].map(() => addProcess(t.app, admin)));
    organizationIdentifier = uniqueOrganization();
    qualified = `${SCHEME}::0192:${organizationIdentifier}`;
    await addParticipant(t.app, serviceProvider, {
      organizationIdentifier,
      processes: [{ identifier: first?.identifier }, { identifier: second?.identifier }],
    });
    await addParticipant(t.app, otherServiceProvider, {
      organizationIdentifier,
      processes: [{ identifier: third?.identifier }],
    });
    // Another organization's processes are not this one's.
    await addParticipant(t.app, serviceProvider, { processes: [{ identifier: unused?.identifier }] });
    expected = [first, second, third]
      .map((process) => process as { identifier: string; qualifiedIdentifier: string })
      .sort((a, b) => (a.qualifiedIdentifier < b.qualifiedIdentifier ? -1 : 1));
  });

  it('returns the union of the processes of all its participants, each once, to anonymous callers too', async () => {
    const response = await call(t.app, { url: url(qualified) });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe(`${vendor('organizations.processes')};charset=UTF-8`);
    expectPublicReadHeaders(response, 'Accept, Authorization');
    const processes = response.json();
    expect(processes.map((process: { identifier: string }) => process.identifier)).toEqual(
      expected.map((process) => process.identifier),
    );
    expect(processes[0]).toMatchObject({
      qualifiedIdentifier: expected[0]?.qualifiedIdentifier,
      domain: 'billing',
      capabilities: [],
      documentTypes: [],
    });
  });

  it('answers every role, and takes the raw or upper-case identifier', async () => {
    for (const user of Object.values(t.users)) {
      expect((await call(t.app, { url: url(qualified), user })).json()).toHaveLength(3);
    }
    expect((await call(t.app, { url: `/rest/api/organizations/${qualified}/processes` })).json()).toHaveLength(3);
    expect((await call(t.app, { url: url(qualified.toUpperCase()) })).json()).toHaveLength(3);
  });

  it('accepts both spellings of its media type', async () => {
    for (const name of ['organizations.processes', 'organization.processes']) {
      const response = await call(t.app, { url: url(qualified), headers: { accept: vendor(name) } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe(`${vendor(name)};charset=UTF-8`);
    }
    expectErrorBody(
      await call(t.app, { url: url(qualified), headers: { accept: vendor('participants.processes') } }),
      406,
    );
  });

  it('is an empty array for a registered organization without processes', async () => {
    const participant = await addParticipant(t.app, t.users.serviceProvider);
    expect((await call(t.app, { url: url(participant.qualifiedIdentifier) })).json()).toEqual([]);
  });

  it('answers the participant 404 body for an unknown or malformed organization', async () => {
    for (const unknown of [`${SCHEME}::0192:${uniqueOrganization()}`, 'no-scheme-here', `${SCHEME}::0000:1`]) {
      const body = expectErrorBody(
        await call(t.app, { url: url(unknown) }),
        404,
        `Couldn't find organization for ${unknown}`,
      );
      expect(body.path).toBe(url(unknown));
    }
  });

  it('leaves out participants from the day their delete date comes, though no change tells it, and answers 404 when none is left', async () => {
    await participantsHeld(t.app);
    const [first, second] = await Promise.all([1, 2].map(() => addProcess(t.app, t.users.admin)));
    const organizationIdentifier = uniqueOrganization();
    const [tomorrow, dayAfter] = [dayFromToday(1), dayFromToday(2)];
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      organizationIdentifier,
      processes: [{ identifier: first?.identifier }],
      deleteDate: tomorrow,
    });
    await addParticipant(t.app, t.users.otherServiceProvider, {
      organizationIdentifier,
      processes: [{ identifier: second?.identifier }],
      deleteDate: dayAfter,
    });
    const lookup = () => call(t.app, { url: url(participant.qualifiedIdentifier) });
    const identifiers = async () =>
      (await lookup())
        .json()
        .map((found: { identifier: string }) => found.identifier)
        .sort();
    expect(await identifiers()).toEqual([first?.identifier, second?.identifier].sort());
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse(`${tomorrow}T00:00:01Z`) });
    try {
      expect(await identifiers()).toEqual([second?.identifier]);
      vi.setSystemTime(Date.parse(`${dayAfter}T00:00:01Z`));
      expectErrorBody(await lookup(), 404, `Couldn't find organization for ${participant.qualifiedIdentifier}`);
    } finally {
      vi.useRealTimers();
    }
  });

  it('says since when the organization can receive each process: kept while the process stays, new when it is given', async () => {
    const [kept, added] = await Promise.all([1, 2].map(() => addProcess(t.app, t.users.admin)));
    const organizationIdentifier = uniqueOrganization();
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      organizationIdentifier,
      processes: [{ identifier: kept?.identifier }],
    });
    const since = async () =>
      Object.fromEntries(
        (await call(t.app, { url: url(participant.qualifiedIdentifier) }))
          .json()
          .map((process: { identifier: string; receivableSince: string }) => [
            process.identifier,
            process.receivableSince,
          ]),
      );
    expect(await since()).toEqual({ [kept!.identifier]: today() });
    await t.db.query("UPDATE participant_processes SET added_at = '2025-03-04T23:30:00Z' WHERE participant_id = $1", [
      participant.identifier,
    ]);

    const updated = await call(t.app, {
      method: 'PUT',
      url: byQualified(participant.qualifiedIdentifier),
      user: t.users.serviceProvider,
      payload: participantForm({
        organizationIdentifier,
        processes: [{ identifier: kept?.identifier }, { identifier: added?.identifier }],
      }),
    });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(await since()).toEqual({ [kept!.identifier]: '2025-03-04', [added!.identifier]: today() });
  });
});

describe('over HTTP, where organization processes held in memory are sent before the router', () => {
  let origin: string;
  let qualified: string;
  let processes: Array<{ identifier: string }>;
  beforeAll(async () => {
    origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    await participantsHeld(t.app);
    processes = await Promise.all([1, 2].map(() => addProcess(t.app, t.users.admin)));
    const organizationIdentifier = uniqueOrganization();
    qualified = `${SCHEME}::0192:${organizationIdentifier}`;
    await addParticipant(t.app, t.users.serviceProvider, {
      organizationIdentifier,
      processes: [{ identifier: processes[0]?.identifier }],
    });
    await addParticipant(t.app, t.users.otherServiceProvider, {
      organizationIdentifier,
      processes: [{ identifier: processes[1]?.identifier }],
    });
  });
  const comparable = (headers: Headers) => [...headers].filter(([name]) => name !== 'x-request-id' && name !== 'date');
  const answered = async () =>
    (await (t.app.metrics.getSingleMetric('http_requests_total') as Counter).get()).values.find(
      ({ labels }) =>
        labels.route === '/rest/api/organizations/:qualifiedIdentifier/processes' && labels.status === '200',
    )?.value ?? 0;

  it("answers each plain Accept header with the route's status, headers and bytes, counted in the metrics, without the route", async () => {
    // The writes above are read by the route's first lookup: until then memory does not answer alone.
    expect((await fetch(`${origin}${url(qualified)}?first=1`)).status).toBe(200);
    for (const accept of [
      undefined,
      '*/*',
      'application/json',
      vendor('organizations.processes'),
      vendor('organization.processes'),
    ]) {
      const headers: Record<string, string> = { 'x-request-id': 'early-lookup', ...(accept && { accept }) };
      const routed = vi.spyOn(HeldParticipants.prototype, 'caughtUp');
      const before = await answered();
      const early = await fetch(`${origin}${url(qualified)}`, { headers });
      // A query string is the router's to strip: that spelling is answered by the route.
      const byRoute = await fetch(`${origin}${url(qualified)}?again=1`, { headers });
      const calls = routed.mock.calls.length;
      routed.mockRestore();
      expect(calls, `the route answered once, not twice (${String(accept)})`).toBe(1);
      expect([early.status, early.headers.get('x-request-id')]).toEqual([200, 'early-lookup']);
      expect(comparable(early.headers), String(accept)).toEqual(comparable(byRoute.headers));
      expect(await early.text()).toBe(await byRoute.text());
      expect(await answered()).toBe(before + 2);
    }
  });

  it('answers the upper-case spelling of the organization as the route does, without the route', async () => {
    const spelled = url(qualified.toUpperCase());
    expect((await fetch(`${origin}${spelled}?first=1`)).status).toBe(200);
    const routed = vi.spyOn(HeldParticipants.prototype, 'caughtUp');
    const early = await fetch(`${origin}${spelled}`);
    expect(routed).not.toHaveBeenCalled();
    const byRoute = await fetch(`${origin}${spelled}?again=1`);
    expect(routed).toHaveBeenCalledTimes(1);
    routed.mockRestore();
    expect([early.status, await early.text()]).toEqual([200, await byRoute.text()]);
    expect(await (await fetch(`${origin}${url(qualified)}`)).text()).toBe(
      await (await fetch(`${origin}${spelled}`)).text(),
    );
  });

  it('leaves credentials, other Accept headers and unknown organizations to the route', async () => {
    const routed = vi.spyOn(HeldParticipants.prototype, 'caughtUp');
    try {
      const withCredentials = await fetch(`${origin}${url(qualified)}`, {
        headers: { authorization: t.users.serviceProvider.authorization },
      });
      expect(withCredentials.status).toBe(200);
      const wrong = await fetch(`${origin}${url(qualified)}`, {
        headers: { authorization: 'Basic bm9ib2R5Om5vdGhpbmc=' },
      });
      expect(wrong.status).toBe(401);
      const xml = await fetch(`${origin}${url(qualified)}`, { headers: { accept: 'application/xml' } });
      expect(xml.status).toBe(406);
      const unknown = await fetch(`${origin}${url(`${SCHEME}::0192:${uniqueOrganization()}`)}`);
      expect([unknown.status, unknown.headers.get('content-type')]).toEqual([404, 'application/json;charset=UTF-8']);
      expect(routed).toHaveBeenCalledTimes(2);
    } finally {
      routed.mockRestore();
    }
  });

  it('lists a registration at once after the write that made it, and answers 404 at once after its delete', async () => {
    const organizationIdentifier = uniqueOrganization();
    const lookup = () => fetch(`${origin}${url(`${SCHEME}::0192:${organizationIdentifier}`)}`);
    expect((await lookup()).status).toBe(404);
    const added = await addParticipant(t.app, t.users.serviceProvider, {
      organizationIdentifier,
      processes: [{ identifier: processes[0]?.identifier }],
    });
    const listed = await lookup();
    expect(
      (await listed.json()).map((process: { identifier: string; receivableSince: string }) => [
        process.identifier,
        process.receivableSince,
      ]),
    ).toEqual([[processes[0]?.identifier, today()]]);
    const removed = await call(t.app, {
      method: 'DELETE',
      url: `/rest/api/participants/${added.identifier}`,
      user: t.users.serviceProvider,
    });
    expect(removed.statusCode).toBe(204);
    expect((await lookup()).status).toBe(404);
  });
});

describe("who an organization is (the public lookup's heading)", () => {
  const summaryUrl = (qualifiedIdentifier: string) =>
    `/rest/api/organizations/${encodeURIComponent(qualifiedIdentifier)}`;

  it('names it as its business card does and lists each provider serving it once, by title, to anonymous callers', async () => {
    const organizationIdentifier = uniqueOrganization();
    const first = await addParticipant(t.app, t.users.otherServiceProvider, {
      organizationIdentifier,
      name: 'Fjord Fisk AS',
    });
    await addParticipant(t.app, t.users.serviceProvider, {
      organizationIdentifier,
      name: 'Fjord Fisk (second name) AS',
    });
    // The first registered is the one whose name the business card publishes.
    await t.db.query('UPDATE participants SET registration_date = registration_date - 1 WHERE id = $1', [
      first.identifier,
    ]);
    const qualified = `${SCHEME}::0192:${organizationIdentifier}`;
    const response = await call(t.app, { url: summaryUrl(qualified) });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe(`${vendor('organizations.get')};charset=UTF-8`);
    expectPublicReadHeaders(response, 'Accept, Authorization');
    // Only public facts: no provider identifier, no contact, no participant identifier.
    expect(response.json()).toEqual({
      qualifiedIdentifier: qualified,
      name: 'Fjord Fisk AS',
      providers: [{ title: 'Provider One' }, { title: 'Provider Two' }],
    });
  });

  it('takes the scheme and value in any case, naming the organization as stored, but folds ASCII letters alone', async () => {
    // ICD 9922 (Andorra's VAT number) has no value rule: its value may hold letters.
    const organizationIdentifier = `kelvin${uniqueOrganization()}`;
    await addParticipant(t.app, t.users.serviceProvider, { icd: '9922', organizationIdentifier });
    const qualified = `${SCHEME}::9922:${organizationIdentifier}`;
    const upper = await call(t.app, { url: summaryUrl(qualified.toUpperCase()) });
    expect(upper.statusCode, upper.body).toBe(200);
    expect(upper.json().qualifiedIdentifier).toBe(qualified);
    const kelvin = `${SCHEME}::9922:\u212A${organizationIdentifier.slice(1)}`;
    expectErrorBody(await call(t.app, { url: summaryUrl(kelvin) }), 404, `Couldn't find organization for ${kelvin}`);
  });

  it('answers the organization 404 for an unknown, malformed or no longer live organization', async () => {
    const participant = await addParticipant(t.app, t.users.serviceProvider);
    expect((await call(t.app, { url: summaryUrl(participant.qualifiedIdentifier) })).statusCode).toBe(200);
    await t.db.query('UPDATE participants SET delete_date = $2 WHERE id = $1', [
      participant.identifier,
      dayFromToday(0),
    ]);
    for (const unknown of [
      participant.qualifiedIdentifier,
      'no-scheme-here',
      `${SCHEME}::0192:${uniqueOrganization()}`,
    ]) {
      expectErrorBody(
        await call(t.app, { url: summaryUrl(unknown) }),
        404,
        `Couldn't find organization for ${unknown}`,
      );
    }
  });
});
