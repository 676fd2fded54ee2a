import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../src/app.js';
import { CatalogueCache } from '../src/catalogue/cache.js';
import { appendChange, SYSTEM_ACTOR } from '../src/changes/log.js';
import { asAdmin, expectStatus } from './helpers/administration.js';
import { startOtherInstance, startTestApp, type TestApp } from './helpers/app.js';
import { addProcess, documentTypeForm, processForm } from './helpers/catalogue.js';
import { testDatabaseKind } from './helpers/database.js';
import { addParticipant, byQualified } from './helpers/participants.js';
import { call, unique } from './helpers/requests.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

const getProcess = async (app: App, id: string) => expectStatus(await call(app, { url: `/rest/api/processes/${id}`, user: null }), 200);

const retitle = async (process: { identifier: string; qualifiedIdentifier: string }, title: string) =>
  expectStatus(await asAdmin(t).send('PUT', `/rest/api/processes/${process.identifier}`,
    processForm({ qualifiedIdentifier: process.qualifiedIdentifier, title })), 200);

describe('the catalogue cache of one instance', () => {
  it('shows a link made from the document type side in the very next process read, and logs it', async () => {
    const process = await addProcess(t.app, t.users.admin);
    expect((await getProcess(t.app, process.identifier)).documentTypes).toEqual([]);
    const documentType = expectStatus(await asAdmin(t).send('POST', '/rest/api/document-types',
      documentTypeForm({ processes: [{ identifier: process.identifier }] })), 201);
    expect((await getProcess(t.app, process.identifier)).documentTypes).toEqual([expect.objectContaining({ identifier: documentType.identifier })]);
    const logged = await t.db.query(
      `SELECT 1 FROM change_log WHERE resource = 'document-type' AND identifier = $1 AND operation = 'create'`,
      [documentType.identifier],
    );
    expect(logged).toHaveLength(1);
  });

  it("shows a process retitled through the API in the very next read of a participant's processes", async () => {
    const process = await addProcess(t.app, t.users.admin);
    const participant = await addParticipant(t.app, t.users.serviceProvider, { processes: [{ identifier: process.identifier }] });
    const read = () => call(t.app, { url: byQualified(participant.qualifiedIdentifier), user: t.users.serviceProvider });
    expect(expectStatus(await read(), 200).processes[0].title).toBe('Billing');
    await retitle(process, 'Billing, retitled');
    expect(expectStatus(await read(), 200).processes[0].title).toBe('Billing, retitled');
  });

  it('drops the catalogue on a change it hears from the log only (another writer, such as the command line)', async () => {
    const process = await addProcess(t.app, t.users.admin);
    await getProcess(t.app, process.identifier);
    // t.db is the database without the app's catch-up after writes: the app hears this from the log.
    await t.db.transaction(async (tx) => {
      await tx.query(`UPDATE processes SET title = 'Retitled elsewhere' WHERE id = $1`, [process.identifier]);
      await appendChange(tx, SYSTEM_ACTOR, { resource: 'process', identifier: process.identifier, operation: 'update', before: null, after: null });
    });
    await t.app.changes.catchUp();
    expect((await getProcess(t.app, process.identifier)).title).toBe('Retitled elsewhere');
  });

  it('does not keep a snapshot whose load began before a change it heard', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const cache = new CatalogueCache(t.db);
    const loading = cache.rows('process');
    await t.db.query(`UPDATE processes SET title = 'Changed during the load' WHERE id = $1`, [process.identifier]);
    cache.onChange({ seq: 0, resource: 'process', identifier: process.identifier, operation: 'update' });
    await loading;
    expect((await cache.rows('process')).row(process.identifier)?.title).toBe('Changed during the load');
  });

  it('ignores changes of participants and users', async () => {
    const cache = new CatalogueCache(t.db);
    const first = await cache.rows('process');
    cache.onChange({ seq: 0, resource: 'participant', identifier: 'iso6523-actorid-upis::0192:x', operation: 'create' });
    cache.onChange({ seq: 0, resource: 'user', identifier: unique('user'), operation: 'update' });
    expect(await cache.rows('process')).toBe(first);
  });
});

describe.runIf(testDatabaseKind === 'postgres')('two instances on one PostgreSQL schema', () => {
  let instance: Awaited<ReturnType<typeof startOtherInstance>>;
  let other: App;
  beforeAll(async () => {
    instance = await startOtherInstance(t);
    other = instance.app;
  });
  afterAll(async () => instance?.close());

  it('a process changed through one instance is read fresh from the other, without a restart', async () => {
    const process = await addProcess(t.app, t.users.admin);
    expect((await getProcess(other, process.identifier)).title).toBe('Billing');
    await retitle(process, 'Retitled on the first instance');
    // NOTIFY carries the signal (the safety poll is 10 s away): the other instance hears it soon.
    await vi.waitFor(async () => expect((await getProcess(other, process.identifier)).title).toBe('Retitled on the first instance'), { timeout: 5000 });
  });

  it('a process created on one instance fills a participant read on the other even before the change is heard', async () => {
    await getProcess(other, (await addProcess(t.app, t.users.admin)).identifier);
    const process = await addProcess(t.app, t.users.admin);
    const participant = await addParticipant(t.app, t.users.serviceProvider, { processes: [{ identifier: process.identifier }] });
    const read = expectStatus(await call(other, { url: byQualified(participant.qualifiedIdentifier), user: t.users.serviceProvider }), 200);
    expect(read.processes).toEqual([expect.objectContaining({ identifier: process.identifier })]);
  });
});
