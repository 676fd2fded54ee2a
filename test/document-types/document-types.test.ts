import { describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { requests } from '../helpers/requests.js';
import { testDatabaseKind } from '../helpers/database.js';
import { expectErrorBody, expectFieldError, expectSpecifiedValidationError } from '../helpers/assertions.js';
import {
  addDocumentType,
  addProcess,
  documentTypeForm,
  expectAddedAndServed,
  insertParticipant,
  whileDeleting,
} from '../helpers/catalogue.js';

const BASE = '/rest/api/document-types';
const FORM = 'documentTypeFormDTO';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

const t = useTestApp();
const { get, send, remove } = requests(t, { reads: null, writes: 'admin' });

describe('add, get, update and delete', () => {
  it('adds a document type with its processes and answers 201 with the created resource', async () => {
    const process = await addProcess(t.app, t.users.admin, { title: 'Ordering', restricted: true });
    const created = await expectAddedAndServed(t.app, t.users.authority, BASE, 'document-types', {
      title: 'Order',
      qualifiedIdentifier: { scheme: 'busdox-docid-qns', value: 'urn:order::2.1' },
      visible: false,
      processes: [{ qualifiedIdentifier: process.qualifiedIdentifier, title: 'ignored' }],
    });
    expect(created).toEqual({
      identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
      qualifiedIdentifier: 'busdox-docid-qns::urn:order::2.1',
      title: 'Order',
      visible: false,
      removedFrom: null,
      processes: [
        {
          identifier: process.identifier,
          qualifiedIdentifier: process.qualifiedIdentifier,
          title: 'Ordering',
          visible: true,
          restricted: true,
          removedFrom: null,
        },
      ],
    });
  });

  it('updates every field and answers 200 with the updated resource', async () => {
    const [first, second] = [await addProcess(t.app, t.users.admin), await addProcess(t.app, t.users.admin)];
    const documentType = await addDocumentType(t.app, t.users.admin, { processes: [{ identifier: first.identifier }] });
    const response = await send(
      'PUT',
      `${BASE}/${documentType.identifier}`,
      {
        title: 'Credit note',
        qualifiedIdentifier: 'busdox-docid-qns::urn:credit-note',
        visible: false,
        processes: [{ identifier: second.identifier }],
      },
      t.users.authority,
    );
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe(
      'application/vnd.registry.document-types.update.v1+json;charset=UTF-8',
    );
    expect(response.json()).toMatchObject({
      identifier: documentType.identifier,
      qualifiedIdentifier: 'busdox-docid-qns::urn:credit-note',
      title: 'Credit note',
      visible: false,
      processes: [{ identifier: second.identifier }],
    });
    expect((await get(`${BASE}/${documentType.identifier}`)).json()).toEqual(response.json());
  });

  it('keeps its own qualified identifier on update without a conflict', async () => {
    const documentType = await addDocumentType(t.app, t.users.admin);
    const response = await send(
      'PUT',
      `${BASE}/${documentType.identifier}`,
      documentTypeForm({
        qualifiedIdentifier: documentType.qualifiedIdentifier,
        title: 'Renamed',
      }),
    );
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().title).toBe('Renamed');
  });
});

describe('validation', () => {
  it.each([
    ['missing', undefined, null],
    ['null', null, null],
    ['empty', '', ''],
  ])(
    'reports a %s title as NotEmpty on `title`, exactly as the specification says',
    async (_case, title, rejectedValue) => {
      const payload = { ...documentTypeForm(), title };
      for (const [method, url] of [
        ['POST', BASE],
        ['PUT', `${BASE}/${(await addDocumentType(t.app, t.users.admin)).identifier}`],
      ] as const) {
        expectSpecifiedValidationError(await send(method, url, payload), url, {
          objectName: FORM,
          field: 'title',
          code: 'NotEmpty',
          rejectedValue,
          defaultMessage: 'must not be empty',
        });
      }
    },
  );

  it('lists every violation of a body at once', async () => {
    const body = expectErrorBody(
      await send('POST', BASE, { title: '', visible: 'yes', processes: 'all' }),
      400,
      `Validation failed for object='${FORM}'. Error count: 4`,
    );
    expectFieldError(body, FORM, 'title', 'NotEmpty', 'must not be empty');
    expectFieldError(body, FORM, 'qualifiedIdentifier', 'NotNull', 'must not be null');
    expect(expectFieldError(body, FORM, 'visible', 'typeMismatch')).toMatchObject({
      bindingFailure: true,
      rejectedValue: 'yes',
    });
    expect(expectFieldError(body, FORM, 'processes', 'typeMismatch')).toMatchObject({ bindingFailure: true });
  });

  it('refuses a qualified identifier without a scheme and duplicate process references', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const body = expectErrorBody(
      await send(
        'POST',
        BASE,
        documentTypeForm({
          qualifiedIdentifier: 'no-scheme',
          processes: [{ identifier: process.identifier }, { identifier: process.identifier }],
        }),
      ),
      400,
      /Error count: 2$/,
    );
    expectFieldError(body, FORM, 'qualifiedIdentifier', 'typeMismatch');
    expectFieldError(body, FORM, 'processes', 'UniqueElements');
  });

  it('reports each unknown process reference at its index, and adds nothing', async () => {
    const known = await addProcess(t.app, t.users.admin);
    const qualifiedIdentifier = `busdox-docid-qns::urn:never-added-${Date.now()}`;
    const body = expectErrorBody(
      await send(
        'POST',
        BASE,
        documentTypeForm({
          qualifiedIdentifier,
          processes: [
            { identifier: known.identifier },
            { identifier: UNKNOWN },
            { qualifiedIdentifier: 'cenbii-procid-ubl::nothing' },
            {},
          ],
        }),
      ),
      400,
      `Validation failed for object='${FORM}'. Error count: 3`,
    );
    expect(expectFieldError(body, FORM, 'processes[1]', 'NotFound').defaultMessage).toBe(
      `no process with identifier '${UNKNOWN}'`,
    );
    expect(expectFieldError(body, FORM, 'processes[2]', 'NotFound').defaultMessage).toBe(
      "no process with identifier 'cenbii-procid-ubl::nothing'",
    );
    expectFieldError(body, FORM, 'processes[3]', 'NotFound');
    expect(body.errors[0].codes[2]).toBe('NotFound.ProcessIdentifiable');
    const all = (await get(`${BASE}?size=2000`)).json().content as Array<{ qualifiedIdentifier: string }>;
    expect(all.map((documentType) => documentType.qualifiedIdentifier)).not.toContain(qualifiedIdentifier);
  });
});

describe('409', () => {
  it('answers 409 for a duplicate qualified identifier on add and on update, in either form', async () => {
    const existing = await addDocumentType(t.app, t.users.admin);
    const [scheme, value] = existing.qualifiedIdentifier.split('::') as [string, string];
    expectErrorBody(
      await send('POST', BASE, documentTypeForm({ qualifiedIdentifier: existing.qualifiedIdentifier })),
      409,
      `A document type with qualified identifier '${existing.qualifiedIdentifier}' already exists`,
    );
    const other = await addDocumentType(t.app, t.users.admin);
    const body = expectErrorBody(
      await send('PUT', `${BASE}/${other.identifier}`, documentTypeForm({ qualifiedIdentifier: { scheme, value } })),
      409,
    );
    expect(body).toMatchObject({ error: 'Conflict', exception: 'ConflictError' });
    expect((await get(`${BASE}/${other.identifier}`)).json().qualifiedIdentifier).toBe(other.qualifiedIdentifier);
  });

  it('refuses to delete a document type that participants use through their processes, naming them', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const documentType = await addDocumentType(t.app, t.users.admin, {
      processes: [{ identifier: process.identifier }],
    });
    await insertParticipant(t.db, t.fixture.serviceProviderId, [process.identifier]);
    await insertParticipant(t.db, t.fixture.otherServiceProviderId, [process.identifier]);
    expectErrorBody(
      await remove(`${BASE}/${documentType.identifier}`),
      409,
      `Document type '${documentType.title}' is still used by 2 participant(s) through the processes ${process.title} (${process.qualifiedIdentifier})`,
    );
    expect((await get(`${BASE}/${documentType.identifier}`)).statusCode).toBe(200);
  });

  // Needs a second connection holding the delete open, which only the PostgreSQL server gives.
  it.runIf(testDatabaseKind === 'postgres')(
    'answers 409, not 500, when a linked process is deleted while the document type is added',
    async () => {
      const process = await addProcess(t.app, t.users.admin);
      const qualifiedIdentifier = `busdox-docid-qns::${Date.now()}-raced`;
      const adding = whileDeleting(t.db, 'DELETE FROM processes WHERE id = $1', [process.identifier], () =>
        send('POST', BASE, documentTypeForm({ qualifiedIdentifier, processes: [{ identifier: process.identifier }] })),
      );
      expectErrorBody(await adding, 409, 'A process named in processes was deleted meanwhile; nothing was changed');
      const all = (await get(`${BASE}?size=2000`)).json().content as Array<{ qualifiedIdentifier: string }>;
      expect(all.map((documentType) => documentType.qualifiedIdentifier)).not.toContain(qualifiedIdentifier);
    },
  );

  it('deletes a document type linked only to processes nobody uses, and the processes lose the link', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const documentType = await addDocumentType(t.app, t.users.admin, {
      processes: [{ identifier: process.identifier }],
    });
    expect((await remove(`${BASE}/${documentType.identifier}`)).statusCode).toBe(204);
    const after = (await get(`/rest/api/processes/${process.identifier}`)).json();
    expect(after.documentTypes).toEqual([]);
  });
});

describe('links with processes', () => {
  const documentTypesOf = async (processId: string) =>
    ((await get(`/rest/api/processes/${processId}`)).json().documentTypes as Array<{ identifier: string }>).map(
      (d) => d.identifier,
    );
  const processesOf = async (documentTypeId: string) =>
    ((await get(`${BASE}/${documentTypeId}`)).json().processes as Array<{ identifier: string }>).map(
      (p) => p.identifier,
    );

  it('shows a link made on the process side on the document type, and the reverse', async () => {
    const documentType = await addDocumentType(t.app, t.users.admin);
    const process = await addProcess(t.app, t.users.admin, {
      documentTypes: [{ identifier: documentType.identifier }],
    });
    expect(await processesOf(documentType.identifier)).toEqual([process.identifier]);

    const linkedHere = await addDocumentType(t.app, t.users.admin, { processes: [{ identifier: process.identifier }] });
    expect((await documentTypesOf(process.identifier)).sort()).toEqual(
      [documentType.identifier, linkedHere.identifier].sort(),
    );
  });

  it('removes a link on one side when the other side drops it', async () => {
    const [first, second] = [await addProcess(t.app, t.users.admin), await addProcess(t.app, t.users.admin)];
    const documentType = await addDocumentType(t.app, t.users.admin, { processes: [{ identifier: first.identifier }] });
    const update = await send(
      'PUT',
      `${BASE}/${documentType.identifier}`,
      documentTypeForm({
        qualifiedIdentifier: documentType.qualifiedIdentifier,
        processes: [{ qualifiedIdentifier: second.qualifiedIdentifier }],
      }),
    );
    expect(update.statusCode, update.body).toBe(200);
    expect(await documentTypesOf(first.identifier)).toEqual([]);
    expect(await documentTypesOf(second.identifier)).toEqual([documentType.identifier]);

    const processUpdate = await send('PUT', `/rest/api/processes/${second.identifier}`, {
      ...second,
      capabilities: [],
      documentTypes: [],
      dependencies: [],
      identifier: undefined,
    });
    expect(processUpdate.statusCode, processUpdate.body).toBe(200);
    expect(await processesOf(documentType.identifier)).toEqual([]);
  });

  it('drops the link when the process is deleted', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const documentType = await addDocumentType(t.app, t.users.admin, {
      processes: [{ identifier: process.identifier }],
    });
    expect((await remove(`/rest/api/processes/${process.identifier}`)).statusCode).toBe(204);
    expect(await processesOf(documentType.identifier)).toEqual([]);
  });
});

describe('find', () => {
  it('pages and sorts by the documented properties, dotted ones included', async () => {
    const titles = ['Zeta', 'Alpha', 'Mu'];
    for (const title of titles)
      await addDocumentType(t.app, t.users.admin, { title, qualifiedIdentifier: `sorting::${title.toLowerCase()}` });
    const all = (await get(`${BASE}?size=2000&sort=title,desc`)).json();
    const mine = all.content.filter((d: { qualifiedIdentifier: string }) =>
      d.qualifiedIdentifier.startsWith('sorting::'),
    );
    expect(mine.map((d: { title: string }) => d.title)).toEqual(['Zeta', 'Mu', 'Alpha']);

    const response = await get(`${BASE}?sort=qualifiedIdentifier.scheme,desc&sort=qualifiedIdentifier.value&size=2`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('application/vnd.registry.document-types.find.v1+json;charset=UTF-8');
    const page = response.json();
    expect(page.content.map((d: { qualifiedIdentifier: string }) => d.qualifiedIdentifier)).toEqual([
      'sorting::alpha',
      'sorting::mu',
    ]);
    expect(page).toMatchObject({
      size: 2,
      number: 0,
      first: true,
      numberOfElements: 2,
      totalElements: all.totalElements,
      sort: { sorted: true },
    });
    expect(page.content[0]).toEqual({
      identifier: expect.any(String),
      qualifiedIdentifier: 'sorting::alpha',
      title: 'Alpha',
      visible: true,
      removedFrom: null,
      processes: [],
    });
  });

  it('refuses a property that is not sortable', async () => {
    const body = expectErrorBody(await get(`${BASE}?sort=processes`), 400);
    expectFieldError(body, 'queryParameters', 'sort', 'InvalidSortProperty');
  });
});
