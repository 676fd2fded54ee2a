import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ACCESS_POINT_PROVIDER_TABLE } from '../../src/access-point-providers/repository.js';
import { ACCESS_POINT_TABLE } from '../../src/access-points/repository.js';
import { buildApp, type App } from '../../src/app.js';
import { CAPABILITY_TABLE } from '../../src/capabilities/repository.js';
import { CatalogueCache } from '../../src/catalogue-cache/catalogue-cache.js';
import type { CatalogueKind, CatalogueTable } from '../../src/db/catalogue-table.js';
import { appendChange, SYSTEM_ACTOR, type ChangeResource } from '../../src/db/change-log.js';
import { pageRequest } from '../../src/core/paging.js';
import type { Database } from '../../src/db/database.js';
import { resourceReads } from '../../src/db/sql.js';
import { DOCUMENT_TYPE_TABLE } from '../../src/document-types/repository.js';
import { PROCESS_TABLE } from '../../src/processes/repository.js';
import { SERVICE_PROVIDER_TABLE } from '../../src/service-providers/repository.js';
import { TRANSPORT_PROFILE_TABLE } from '../../src/transport-profiles/repository.js';
import { asAdmin, contactForm, expectStatus } from '../helpers/administration.js';
import { startOtherInstance, startTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { addProcess, documentTypeForm, processForm } from '../helpers/catalogue.js';
import { testDatabaseKind } from '../helpers/database.js';
import { addParticipant, byQualified } from '../helpers/participants.js';
import { call, unique } from '../helpers/requests.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

/** Each kind the cache holds: where the API serves it, its rows for the cache, and the form of a new one titled `title`. */
interface Kind {
  kind: CatalogueKind;
  path: string;
  rows: CatalogueTable;
  form(title: string): Record<string, unknown>;
}

const KINDS: Kind[] = [
  { kind: 'process', path: '/rest/api/processes', rows: PROCESS_TABLE, form: (title) => processForm({ title }) },
  {
    kind: 'document-type',
    path: '/rest/api/document-types',
    rows: DOCUMENT_TYPE_TABLE,
    form: (title) => documentTypeForm({ title }),
  },
  { kind: 'capability', path: '/rest/api/capabilities', rows: CAPABILITY_TABLE, form: (title) => ({ title }) },
  {
    kind: 'transport-profile',
    path: '/rest/api/transport-profiles',
    rows: TRANSPORT_PROFILE_TABLE,
    form: (title) => ({ value: unique('peppol-transport'), title }),
  },
  {
    kind: 'access-point-provider',
    path: '/rest/api/access-point-providers',
    rows: ACCESS_POINT_PROVIDER_TABLE,
    form: (title) => ({ title, contact: contactForm() }),
  },
  {
    kind: 'access-point',
    path: '/rest/api/accessPoints',
    rows: ACCESS_POINT_TABLE,
    form: (title) => ({ title, provider: { identifier: t.fixture.accessPointProviderId }, endpoints: [] }),
  },
  {
    kind: 'service-provider',
    path: '/rest/api/service-providers',
    rows: SERVICE_PROVIDER_TABLE,
    form: (title) => ({ title, accessPoint: { identifier: t.fixture.accessPointId } }),
  },
];

/** A resource added through the API, with the form it was added with (to update it with). */
interface Added {
  path: string;
  identifier: string;
  form: Record<string, unknown>;
}

async function added(path: string, form: Record<string, unknown>): Promise<Added> {
  const { identifier } = expectStatus(
    await call(t.app, { method: 'POST', url: path, user: t.users.admin, payload: form }),
    201,
  );
  return { path, identifier, form };
}

const retitled = async (resource: Added, title: string, app: App = t.app) =>
  expectStatus(
    await call(app, {
      method: 'PUT',
      url: `${resource.path}/${resource.identifier}`,
      user: t.users.admin,
      payload: { ...resource.form, title },
    }),
    200,
  );

/** The resource as `app` answers its get, after checking that its find lists the same. */
async function read(resource: Added, app: App = t.app) {
  const one = expectStatus(
    await call(app, { url: `${resource.path}/${resource.identifier}`, user: t.users.admin }),
    200,
  );
  const page = expectStatus(await call(app, { url: `${resource.path}?size=2000`, user: t.users.admin }), 200);
  expect(page.content.filter((row: { identifier: string }) => row.identifier === resource.identifier)).toEqual([one]);
  return one;
}

const getProcess = async (app: App, id: string) =>
  expectStatus(await call(app, { url: `/rest/api/processes/${id}`, user: null }), 200);

const retitle = async (process: { identifier: string; qualifiedIdentifier: string }, title: string) =>
  expectStatus(
    await asAdmin(t).send(
      'PUT',
      `/rest/api/processes/${process.identifier}`,
      processForm({ qualifiedIdentifier: process.qualifiedIdentifier, title }),
    ),
    200,
  );

describe('the catalogue cache of one instance', () => {
  it('shows a link made from the document type side in the very next process read, and logs it', async () => {
    const process = await addProcess(t.app, t.users.admin);
    expect((await getProcess(t.app, process.identifier)).documentTypes).toEqual([]);
    const documentType = expectStatus(
      await asAdmin(t).send(
        'POST',
        '/rest/api/document-types',
        documentTypeForm({ processes: [{ identifier: process.identifier }] }),
      ),
      201,
    );
    expect((await getProcess(t.app, process.identifier)).documentTypes).toEqual([
      expect.objectContaining({ identifier: documentType.identifier }),
    ]);
    const logged = await t.db.query(
      `SELECT 1 FROM change_log WHERE resource = 'document-type' AND identifier = $1 AND operation = 'create'`,
      [documentType.identifier],
    );
    expect(logged).toHaveLength(1);
  });

  it("shows a process retitled through the API in the very next read of a participant's processes", async () => {
    const process = await addProcess(t.app, t.users.admin);
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: process.identifier }],
    });
    const read = () =>
      call(t.app, { url: byQualified(participant.qualifiedIdentifier), user: t.users.serviceProvider });
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
      await appendChange(tx, SYSTEM_ACTOR, {
        resource: 'process',
        identifier: process.identifier,
        operation: 'update',
        before: null,
        after: null,
      });
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

  it('sends kept gets and pages in the media type asked for, with their length, the same bytes each time', async () => {
    const process = await addProcess(t.app, t.users.admin);
    t.app.catalogue.onChange({ seq: 0, resource: 'process', identifier: process.identifier, operation: 'update' });
    for (const [url, accept] of [
      [`/rest/api/processes/${process.identifier}`, 'application/vnd.registry.processes.get.v1+json'],
      ['/rest/api/processes?size=7', 'application/vnd.registry.processes.find.v1+json'],
      [`/rest/api/processes/${process.identifier}`, 'application/json'],
    ] as const) {
      const [first, kept] = [
        await call(t.app, { url, user: null, headers: { accept } }),
        await call(t.app, { url, user: null, headers: { accept } }),
      ];
      expect([first.statusCode, kept.statusCode], url).toEqual([200, 200]);
      expect(kept.headers['content-type']).toBe(`${accept};charset=UTF-8`);
      expect(kept.headers['content-type']).toBe(first.headers['content-type']);
      expect(kept.rawPayload.equals(first.rawPayload)).toBe(true);
      expect(kept.headers['content-length']).toBe(String(first.rawPayload.length));
    }
  });

  it('keeps a serialized answer with the rows it was built from, and builds the ones beyond its budget on every read', async () => {
    const cache = new CatalogueCache(t.db);
    const held = await cache.rows('process');
    const build = vi.fn(() => 'small answer');
    expect([held.answer('small', build), held.answer('small', build)].map(String)).toEqual([
      'small answer',
      'small answer',
    ]);
    expect(build).toHaveBeenCalledTimes(1);
    const large = vi.fn(() => 'x'.repeat(9 * 1024 * 1024));
    held.answer('large', large);
    held.answer('large', large);
    expect(large).toHaveBeenCalledTimes(2);
    cache.onChange({ seq: 0, resource: 'process', identifier: unique('changed'), operation: 'update' });
    (await cache.rows('process')).answer('small', build);
    expect(build).toHaveBeenCalledTimes(2);
  });

  const DROPPED_BY: Record<ChangeResource, CatalogueKind[]> = {
    process: ['process', 'document-type'],
    'document-type': ['process', 'document-type'],
    capability: ['process', 'capability'],
    'transport-profile': ['transport-profile', 'access-point'],
    'access-point-provider': ['access-point-provider', 'access-point'],
    'access-point': ['access-point', 'service-provider'],
    'service-provider': ['service-provider'],
    participant: [],
    user: [],
    'sign-in-lock': [],
    'register-flag': [],
    'identifier-scheme': [],
    'removal-notice': [],
  };

  it.each(Object.entries(DROPPED_BY))(
    'drops on a change of a %s exactly the kinds that show it: %j',
    async (resource, dropped) => {
      const cache = new CatalogueCache(t.db);
      const held = async () => Promise.all(KINDS.map(({ kind }) => cache.rows(kind)));
      const before = await held();
      cache.onChange({
        seq: 0,
        resource: resource as ChangeResource,
        identifier: unique('changed'),
        operation: 'update',
      });
      const after = await held();
      expect(
        KINDS.filter((_, index) => after[index] !== before[index])
          .map(({ kind }) => kind)
          .sort(),
      ).toEqual([...dropped].sort());
    },
  );
});

describe('every kind the cache holds', () => {
  it.each(KINDS)(
    '$kind: an add, an update and a delete through the API show in the very next get and page',
    async ({ path, form }) => {
      const page = async () =>
        expectStatus(await call(t.app, { url: `${path}?size=2000`, user: t.users.admin }), 200).content;
      await page();
      const resource = await added(path, form(unique('Held')));
      expect(await read(resource)).toMatchObject({ title: resource.form.title });
      const updated = await retitled(resource, 'Retitled through the API');
      expect(await read(resource)).toEqual(updated);
      expectStatus(
        await call(t.app, { method: 'DELETE', url: `${path}/${resource.identifier}`, user: t.users.admin }),
        204,
      );
      expectErrorBody(await call(t.app, { url: `${path}/${resource.identifier}`, user: t.users.admin }), 404);
      expect(await page()).not.toContainEqual(updated);
    },
  );

  /** A resource shown inside another, and the title the other shows of it. */
  type Answer = Awaited<ReturnType<typeof read>>;
  const EMBEDDED: Array<{
    shown: string;
    make(): Promise<{ embedded: Added; embedding: Added; title(embedding: Answer): string }>;
  }> = [
    {
      shown: 'a capability in its process',
      async make() {
        const embedded = await added('/rest/api/capabilities', { title: unique('Capability') });
        const embedding = await added(
          '/rest/api/processes',
          processForm({ capabilities: [{ identifier: embedded.identifier }] }),
        );
        return { embedded, embedding, title: (process) => process.capabilities[0].title };
      },
    },
    {
      shown: 'a document type in its process',
      async make() {
        const embedding = await added('/rest/api/processes', processForm());
        const embedded = await added(
          '/rest/api/document-types',
          documentTypeForm({ processes: [{ identifier: embedding.identifier }] }),
        );
        return { embedded, embedding, title: (process) => process.documentTypes[0].title };
      },
    },
    {
      shown: 'a process in its document type',
      async make() {
        const embedding = await added('/rest/api/document-types', documentTypeForm());
        const embedded = await added(
          '/rest/api/processes',
          processForm({ documentTypes: [{ identifier: embedding.identifier }] }),
        );
        return { embedded, embedding, title: (documentType) => documentType.processes[0].title };
      },
    },
    {
      shown: 'a transport profile in an access point',
      async make() {
        const embedded = await added('/rest/api/transport-profiles', {
          value: unique('peppol-transport'),
          title: 'AS4',
        });
        const embedding = await added('/rest/api/accessPoints', {
          title: unique('Access point'),
          provider: { identifier: t.fixture.accessPointProviderId },
          endpoints: [{ url: 'https://ap.example/as4', transportProfile: { value: embedded.form.value } }],
        });
        return { embedded, embedding, title: (accessPoint) => accessPoint.endpoints[0].transportProfile.title };
      },
    },
    {
      shown: 'an access point provider in its access point',
      async make() {
        const embedded = await added('/rest/api/access-point-providers', {
          title: unique('AP provider'),
          contact: contactForm(),
        });
        const embedding = await added('/rest/api/accessPoints', {
          title: unique('Access point'),
          provider: { identifier: embedded.identifier },
          endpoints: [],
        });
        return { embedded, embedding, title: (accessPoint) => accessPoint.provider.title };
      },
    },
    {
      shown: 'an access point in its service provider',
      async make() {
        const embedded = await added('/rest/api/accessPoints', {
          title: unique('Access point'),
          provider: { identifier: t.fixture.accessPointProviderId },
          endpoints: [],
        });
        const embedding = await added('/rest/api/service-providers', {
          title: unique('Service provider'),
          accessPoint: { identifier: embedded.identifier },
        });
        return { embedded, embedding, title: (serviceProvider) => serviceProvider.accessPoint.title };
      },
    },
  ];

  it.each(EMBEDDED)('shows $shown retitled in the very next get and page', async ({ make }) => {
    const { embedded, embedding, title } = await make();
    expect(title(await read(embedding))).toBe(embedded.form.title);
    await retitled(embedded, 'Retitled where it is shown');
    expect(title(await read(embedding))).toBe('Retitled where it is shown');
  });

  it.each(KINDS)(
    '$kind: pages in every sort as the database does, ties, nulls and collation included',
    async ({ path, form, rows }) => {
      for (const title of ['beta', 'Beta', 'alpha', 'Ål', '_under', 'Zed', 'beta']) await added(path, form(title));
      const properties = Object.keys(rows.sortable);
      const sorts = [
        ...properties.flatMap((property) => [[property], [`${property},desc`]]),
        [`${properties.at(-1)},desc`, properties[0] as string],
      ];
      const fromDatabase = resourceReads(rows).findAll;
      for (const sort of sorts) {
        for (const query of [
          { page: 0, size: 2000, sort },
          { page: 1, size: 3, sort },
        ]) {
          const url = `${path}?page=${query.page}&size=${query.size}&${sort.map((term) => `sort=${encodeURIComponent(term)}`).join('&')}`;
          const served = expectStatus(await call(t.app, { url, user: t.users.admin }), 200);
          const expected = await fromDatabase(t.db, pageRequest(query, rows.sortable, rows.id));
          expect({ total: served.totalElements, rows: served.content }, url).toEqual(expected);
        }
      }
    },
  );
});

describe('while the database is unreachable', () => {
  let cut = false;
  let app: App;
  beforeAll(async () => {
    const unreachable = () =>
      Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    const db: Database = { ...t.db, query: (sql, params) => (cut ? unreachable() : t.db.query(sql, params)) };
    app = await buildApp({ db, console: false });
    await app.ready();
  });
  afterAll(async () => {
    cut = false;
    await app?.close();
  });

  it('answers the pages and gets it holds from memory, and a read that needs the database with a clean 503', async () => {
    const resources = await Promise.all(KINDS.map(({ path, form }) => added(path, form(unique('Held')))));
    const urls = resources.flatMap(({ path, identifier }) => [
      `${path}?size=5`,
      `${path}?sort=title,desc&page=1&size=2`,
      `${path}/${identifier}`,
    ]);
    const before = await Promise.all(urls.map((url) => call(app, { url, user: t.users.admin })));
    cut = true;
    for (const [index, url] of urls.entries()) {
      const during = await call(app, { url, user: t.users.admin });
      expect(during.statusCode, url).toBe(200);
      expect(during.body, url).toBe(before[index]?.body);
    }
    const participants = await call(app, { url: '/rest/api/participants', user: t.users.admin });
    expect(participants.statusCode).toBe(503);
    expect(participants.json()).toMatchObject({
      status: 503,
      error: 'Service Unavailable',
      exception: 'ServiceUnavailableError',
    });
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
    await vi.waitFor(
      async () => expect((await getProcess(other, process.identifier)).title).toBe('Retitled on the first instance'),
      { timeout: 5000 },
    );
  });

  it.each(KINDS)(
    '$kind: a change through one instance is served by the other once it has heard it',
    async ({ path, form }) => {
      const resource = await added(path, form(unique('Held')));
      expect(await read(resource, other)).toMatchObject({ title: resource.form.title });
      const updated = await retitled(resource, 'Retitled on the first instance');
      await vi.waitFor(async () => expect(await read(resource, other)).toEqual(updated), { timeout: 5000 });
    },
  );

  it('a process created on one instance fills a participant read on the other even before the change is heard', async () => {
    await getProcess(other, (await addProcess(t.app, t.users.admin)).identifier);
    const process = await addProcess(t.app, t.users.admin);
    const participant = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: process.identifier }],
    });
    const read = expectStatus(
      await call(other, { url: byQualified(participant.qualifiedIdentifier), user: t.users.serviceProvider }),
      200,
    );
    expect(read.processes).toEqual([expect.objectContaining({ identifier: process.identifier })]);
  });
});
