import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, unique } from '../helpers/requests.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { accessPointForm, asAdmin, contactForm, expectStatus, UNKNOWN } from '../helpers/administration.js';
import { addProcess, documentTypeForm, processForm } from '../helpers/catalogue.js';
import { addParticipant, participantForm, PARTICIPANTS } from '../helpers/participants.js';
import { testDatabaseKind } from '../helpers/database.js';
import { openPostgres } from '../../src/db/postgres.js';
import { TEST_DATABASE_URL } from '../helpers/database.js';
import { appendChange, CLI_ACTOR, SYSTEM_ACTOR } from '../../src/db/change-log.js';
import type { Queryable } from '../../src/db/database.js';
import { loadCatalogue } from '../../src/code-lists/repository.js';
import { starterCatalogue } from '../../src/setup/starter-catalogue.js';

interface Entry {
  seq: number;
  resource: string;
  identifier: string;
  operation: string;
  origin: string;
  username: string | null;
  role: string | null;
  actingProviderId: string | null;
  requestId: string | null;
  serviceProviderIds: string[];
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

async function lastSeq(): Promise<number> {
  const [row] = await t.db.query<{ seq: number }>('SELECT seq FROM change_log_position');
  return row?.seq ?? 0;
}

async function entriesAfter(seq: number): Promise<Entry[]> {
  return t.db.query<Entry>(
    `SELECT seq, resource, identifier, operation, origin, username, role, acting_provider_id AS "actingProviderId",
            request_id AS "requestId", service_provider_ids::text[] AS "serviceProviderIds",
            change_log_state(before) AS before, change_log_state(after) AS after
       FROM change_log WHERE seq > $1 ORDER BY seq`,
    [seq],
  );
}

/** The entries `write` appended. */
async function appendedBy(write: () => Promise<unknown>): Promise<Entry[]> {
  const before = await lastSeq();
  await write();
  return entriesAfter(before);
}

describe('the change log', () => {
  it('records a managed resource added, changed and deleted: who, what, before and after', async () => {
    const api = asAdmin(t);
    let created: Record<string, unknown> = {};
    const [add, ...others] = await appendedBy(async () => {
      const response = await api.send(
        'POST',
        '/rest/api/capabilities',
        { title: unique('capability') },
        t.users.authority,
        { 'x-request-id': 'req-add-1' },
      );
      created = expectStatus(response, 201);
    });
    expect(others).toEqual([]);
    expect(add).toMatchObject({
      resource: 'capability',
      identifier: created.identifier,
      operation: 'create',
      origin: 'api',
      username: 'authority',
      role: 'REGISTRY_AUTHORITY',
      requestId: 'req-add-1',
      before: null,
      after: created,
    });

    let updated: Record<string, unknown> = {};
    const [update, ...more] = await appendedBy(async () => {
      updated = expectStatus(
        await api.send('PUT', `/rest/api/capabilities/${created.identifier}`, { title: unique('renamed') }),
        200,
      );
    });
    expect(more).toEqual([]);
    expect(update).toMatchObject({
      operation: 'update',
      username: 'admin',
      role: 'ADMIN',
      before: created,
      after: updated,
    });

    const [remove, ...rest] = await appendedBy(async () => {
      expectStatus(await api.remove(`/rest/api/capabilities/${created.identifier}`), 204);
    });
    expect(rest).toEqual([]);
    expect(remove).toMatchObject({
      resource: 'capability',
      identifier: created.identifier,
      operation: 'delete',
      before: updated,
      after: null,
    });
  });

  it('records the add and the delete of every resource the authority manages, under its kind and UUID', async () => {
    const api = asAdmin(t);
    const made: Array<{ resource: string; url: string; body: Record<string, unknown> }> = [];
    const addOne = async (resource: string, url: string, form: Record<string, unknown>) => {
      const [entry, ...rest] = await appendedBy(async () => {
        made.push({ resource, url, body: expectStatus(await api.send('POST', url, form, t.users.authority), 201) });
      });
      const { body } = made.at(-1) as { body: Record<string, unknown> };
      expect(rest).toEqual([]);
      expect(entry).toMatchObject({
        resource,
        identifier: body.identifier,
        operation: 'create',
        before: null,
        after: body,
      });
      return body;
    };
    await addOne('process', '/rest/api/processes', processForm());
    await addOne('document-type', '/rest/api/document-types', documentTypeForm());
    const provider = await addOne('access-point-provider', '/rest/api/access-point-providers', {
      title: unique('AP provider'),
      contact: contactForm(),
    });
    const profile = await addOne('transport-profile', '/rest/api/transport-profiles', {
      value: unique('peppol-transport-as4'),
      title: 'AS4',
    });
    const accessPoint = await addOne(
      'access-point',
      '/rest/api/accessPoints',
      accessPointForm(provider.identifier as string, profile.value as string),
    );
    await addOne('service-provider', '/rest/api/service-providers', {
      title: unique('SP'),
      accessPoint: { identifier: accessPoint.identifier },
    });
    for (const { resource, url, body } of made.reverse()) {
      const [entry, ...rest] = await appendedBy(async () => {
        expectStatus(await api.remove(`${url}/${body.identifier as string}`, t.users.authority), 204);
      });
      expect(rest).toEqual([]);
      expect(entry).toMatchObject({
        resource,
        identifier: body.identifier,
        operation: 'delete',
        before: body,
        after: null,
      });
    }
  });

  it('records a participant added, updated, transferred and deleted under its qualified identifier, with its providers', async () => {
    const { serviceProviderId, otherServiceProviderId } = t.fixture;
    // With a process, so that each entry's states show it: an update, a transfer and a delete read them apart.
    const process = await addProcess(t.app, t.users.admin);
    const processes = [{ identifier: process.identifier }];
    let participant: Record<string, unknown> = {};
    const [add] = await appendedBy(async () => {
      participant = await addParticipant(t.app, t.users.serviceProvider, { processes });
    });
    expect(add).toMatchObject({
      resource: 'participant',
      identifier: participant.qualifiedIdentifier,
      operation: 'create',
      username: 'provider-one',
      role: 'SERVICE_PROVIDER',
      actingProviderId: serviceProviderId,
      serviceProviderIds: [serviceProviderId],
      before: null,
      after: participant,
    });

    const url = `${PARTICIPANTS}/${participant.qualifiedIdentifier as string}`;
    let updated: Record<string, unknown> = {};
    const [update] = await appendedBy(async () => {
      const response = await call(t.app, {
        method: 'PUT',
        url,
        user: t.users.serviceProvider,
        payload: { processes, contact: { name: 'Ola Nordmann' } },
      });
      updated = expectStatus(response, 200);
    });
    expect(update).toMatchObject({ operation: 'update', before: participant, after: updated });
    expect(updated).toMatchObject({
      contact: { name: 'Ola Nordmann' },
      processes: [{ identifier: process.identifier }],
    });

    const transfer = await appendedBy(async () => {
      const response = await call(t.app, {
        method: 'PUT',
        url: `${url}/transfer/${otherServiceProviderId}`,
        user: t.users.serviceProvider,
      });
      expect(response.statusCode).toBe(200);
    });
    expect(transfer).toHaveLength(1);
    expect(transfer[0]).toMatchObject({
      operation: 'transfer',
      before: updated,
      identifier: participant.qualifiedIdentifier,
    });
    expect(new Set(transfer[0]?.serviceProviderIds)).toEqual(new Set([serviceProviderId, otherServiceProviderId]));
    expect(transfer[0]?.after).toMatchObject({ provider: { identifier: otherServiceProviderId } });

    const [remove, ...rest] = await appendedBy(async () => {
      expectStatus(await call(t.app, { method: 'DELETE', url, user: t.users.otherServiceProvider }), 204);
    });
    expect(rest).toEqual([]);
    expect(remove).toMatchObject({
      operation: 'delete',
      after: null,
      serviceProviderIds: [otherServiceProviderId],
      before: transfer[0]?.after,
    });
    expect(remove?.before).toMatchObject({ processes: [{ identifier: process.identifier }] });
  });

  it("records a participant's process as it is at each write, after the process changed", async () => {
    const process = await addProcess(t.app, t.users.admin);
    const processes = [{ identifier: process.identifier }];
    const [add] = await appendedBy(() => addParticipant(t.app, t.users.serviceProvider, { processes }));
    const participant = add?.after as { qualifiedIdentifier: string };
    expectStatus(
      await call(t.app, {
        method: 'PUT',
        url: `/rest/api/processes/${process.identifier}`,
        user: t.users.admin,
        payload: processForm({ qualifiedIdentifier: process.qualifiedIdentifier, title: 'Billing, renamed' }),
      }),
      200,
    );
    const [update] = await appendedBy(async () =>
      expectStatus(
        await call(t.app, {
          method: 'PUT',
          url: `${PARTICIPANTS}/${participant.qualifiedIdentifier}`,
          user: t.users.serviceProvider,
          payload: { processes, contact: { name: 'Ola Nordmann' } },
        }),
        200,
      ),
    );
    expect(add?.after).toMatchObject({ processes: [{ identifier: process.identifier, title: process.title }] });
    expect(update?.before).toMatchObject({
      processes: [{ identifier: process.identifier, title: 'Billing, renamed' }],
    });
    expect(update?.after).toMatchObject({ processes: [{ identifier: process.identifier, title: 'Billing, renamed' }] });
  });

  it('sends a process state again when the database no longer has it (a rollback, another database, a failover)', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const processes = [{ identifier: process.identifier }];
    await addParticipant(t.app, t.users.serviceProvider, { processes });
    // The state was stored with the first participant; the database loses it, as a failover that lost commits would.
    await t.db.query('DELETE FROM change_log_process_states');
    const [add] = await appendedBy(() => addParticipant(t.app, t.users.serviceProvider, { processes }));
    expect(add?.after).toMatchObject({ processes: [{ identifier: process.identifier, title: process.title }] });
    const [again] = await appendedBy(() => addParticipant(t.app, t.users.serviceProvider, { processes }));
    expect(again?.after).toMatchObject({ processes: [{ identifier: process.identifier, title: process.title }] });
    const [{ copies } = { copies: 0 }] = await t.db.query<{ copies: number }>(
      'SELECT count(*)::int AS copies FROM change_log_process_states',
    );
    expect(copies).toBe(1);
  });

  it('records users without their password or its hash, and says when a password changed', async () => {
    const api = asAdmin(t);
    const password = 'a-long-secret-password-1';
    let user: Record<string, unknown> = {};
    const entries = await appendedBy(async () => {
      user = expectStatus(
        await api.send('POST', '/rest/api/users', { username: unique('user'), password, role: 'REGISTRY_AUTHORITY' }),
        201,
      );
      const update = { username: user.username, password: 'another-long-secret-2', role: 'REGISTRY_AUTHORITY' };
      expectStatus(await api.send('PUT', `/rest/api/users/${user.identifier}`, update), 200);
    });
    expect(entries.map((entry) => entry.operation)).toEqual(['create', 'update']);
    expect(entries[0]?.after).toEqual(user);
    expect(entries[1]?.after).toMatchObject({ passwordChanged: true });
    const text = JSON.stringify(entries);
    expect(text).not.toContain('secret');
    expect(text).not.toMatch(/argon|scrypt|\$2[aby]\$|password"\s*:/i);
  });

  it('appends nothing for a refused, invalid, unknown or conflicting write', async () => {
    const api = asAdmin(t);
    const existing = await addParticipant(t.app, t.users.serviceProvider);
    const entries = await appendedBy(async () => {
      expectStatus(
        await api.send('POST', '/rest/api/capabilities', { title: unique('no') }, t.users.serviceProvider),
        403,
      );
      expectStatus(await api.send('POST', '/rest/api/capabilities', { title: '' }), 400);
      expectStatus(await api.remove(`/rest/api/capabilities/${UNKNOWN}`), 404);
      expectStatus(
        await call(t.app, {
          method: 'POST',
          url: PARTICIPANTS,
          user: t.users.serviceProvider,
          payload: participantForm({ organizationIdentifier: existing.organizationIdentifier }),
        }),
        409,
      );
      expectStatus(
        await call(t.app, {
          method: 'DELETE',
          url: `${PARTICIPANTS}/${existing.qualifiedIdentifier}`,
          user: t.users.otherServiceProvider,
        }),
        404,
      );
    });
    expect(entries).toEqual([]);
  });

  it('records what the catalogue loader added, once: loading the same release again appends nothing', async () => {
    const catalogue = await starterCatalogue();
    const first = await appendedBy(() => loadCatalogue(t.db, catalogue, { actor: CLI_ACTOR }));
    const rows =
      catalogue.processes.length +
      catalogue.documentTypes.length +
      catalogue.transportProfiles.length +
      catalogue.identifierSchemes.length;
    expect(first).toHaveLength(rows);
    expect(new Set(first.map((entry) => `${entry.origin} ${entry.operation}`))).toEqual(new Set(['cli create']));
    expect(first.find((entry) => entry.resource === 'process')?.after).toMatchObject({
      value: catalogue.processes[0]?.value,
    });
    expect(await appendedBy(() => loadCatalogue(t.db, catalogue, { actor: CLI_ACTOR }))).toEqual([]);
  });

  it('numbers the entries of concurrent writes densely, without gaps from writes that failed', async () => {
    const before = await lastSeq();
    const api = asAdmin(t);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        api.send('POST', '/rest/api/capabilities', { title: index % 4 === 0 ? '' : unique('concurrent') }),
      ),
    );
    const succeeded = responses.filter((response) => response.statusCode === 201).length;
    const entries = await entriesAfter(before);
    expect(succeeded).toBe(15);
    expect(entries.map((entry) => entry.seq)).toEqual(Array.from({ length: 15 }, (_, index) => before + 1 + index));
  });
});

describe.runIf(testDatabaseKind === 'postgres')('the position of an entry on PostgreSQL', () => {
  it('follows the commit order, so a follower reading after a position never skips one committed later', async () => {
    const [schema] = await t.db.query<{ name: string }>('SELECT current_schema() AS name');
    const second = openPostgres({
      connectionString: TEST_DATABASE_URL,
      schema: `${schema?.name},public`,
      maxConnections: 2,
    });
    const { promise: firstMayCommit, resolve: releaseFirst } = Promise.withResolvers<void>();
    try {
      const before = await lastSeq();
      const append = (tx: Queryable, identifier: string) =>
        appendChange(tx, SYSTEM_ACTOR, {
          resource: 'capability',
          identifier,
          operation: 'create',
          before: null,
          after: null,
        });
      // The first transaction appends first but commits last.
      const first = second.transaction(async (tx) => {
        await append(tx, 'first');
        await firstMayCommit;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await second.transaction((tx) => append(tx, 'second'));
      const seen = await entriesAfter(before);
      expect(seen.map((entry) => [entry.seq, entry.identifier])).toEqual([[before + 1, 'second']]);
      releaseFirst();
      await first;
      const all = await entriesAfter(before);
      expect(all.map((entry) => [entry.seq, entry.identifier])).toEqual([
        [before + 1, 'second'],
        [before + 2, 'first'],
      ]);
    } finally {
      releaseFirst();
      await second.close();
    }
  });
});
