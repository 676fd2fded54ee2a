import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { requests, unique } from '../helpers/requests.js';
import {
  expectErrorBody,
  expectFieldError,
  expectSecurityHeaders,
  expectSpecifiedValidationError,
} from '../helpers/assertions.js';
import { testDatabaseKind } from '../helpers/database.js';
import {
  addDocumentType,
  addProcess,
  expectAddedAndServed,
  insertCapability,
  insertParticipant,
  processForm,
  whileDeleting,
} from '../helpers/catalogue.js';

const BASE = '/rest/api/processes';
const FORM = 'processFormDTO';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const STREAM = 'application/vnd.registry.processes.stream.v1+json';

const t = useTestApp();
const { get, send, remove } = requests(t, { reads: null, writes: 'admin' });
const identifiers = (items: Array<{ identifier: string }>) => items.map((item) => item.identifier);

describe('add, get, update and delete', () => {
  it('adds a process with all its relations and answers 201 with the created resource', async () => {
    const capability = await insertCapability(t.db, 'Receive invoices');
    const documentType = await addDocumentType(t.app, t.users.admin, { title: 'Invoice', visible: false });
    const dependency = await addProcess(t.app, t.users.admin, { title: 'Catalogue', restricted: true });
    const created = await expectAddedAndServed(t.app, t.users.authority, BASE, 'processes', {
      domain: 'procurement',
      title: 'Ordering',
      alias: 'order',
      qualifiedIdentifier: { scheme: 'cenbii-procid-ubl', value: 'urn:fdc:peppol.eu:poacc:bis:ordering:3' },
      restricted: false,
      visible: true,
      capabilities: [{ identifier: capability, title: 'ignored' }],
      documentTypes: [{ qualifiedIdentifier: documentType.qualifiedIdentifier }],
      dependencies: [{ identifier: dependency.identifier }],
      requiredICDs: ['0192', '0007'],
    });
    expect(created).toEqual({
      identifier: expect.stringMatching(/^[0-9a-f-]{36}$/),
      qualifiedIdentifier: 'cenbii-procid-ubl::urn:fdc:peppol.eu:poacc:bis:ordering:3',
      domain: 'procurement',
      title: 'Ordering',
      alias: 'order',
      restricted: false,
      visible: true,
      removedFrom: null,
      capabilities: [{ identifier: capability, title: 'Receive invoices' }],
      documentTypes: [
        {
          identifier: documentType.identifier,
          qualifiedIdentifier: documentType.qualifiedIdentifier,
          title: 'Invoice',
          visible: false,
          removedFrom: null,
        },
      ],
      dependencies: [
        {
          identifier: dependency.identifier,
          qualifiedIdentifier: dependency.qualifiedIdentifier,
          title: 'Catalogue',
          restricted: true,
          visible: true,
          removedFrom: null,
        },
      ],
      requiredICDs: ['0192', '0007'],
    });
  });

  it('answers alias null when a process has none', async () => {
    const process = await addProcess(t.app, t.users.admin);
    expect(process.alias).toBeNull();
  });

  it('updates every field and relation and answers 200 with the updated resource', async () => {
    const [oldType, newType] = [
      await addDocumentType(t.app, t.users.admin),
      await addDocumentType(t.app, t.users.admin),
    ];
    const [oldDependency, newDependency] = [
      await addProcess(t.app, t.users.admin),
      await addProcess(t.app, t.users.admin),
    ];
    const process = await addProcess(t.app, t.users.admin, {
      documentTypes: [{ identifier: oldType.identifier }],
      dependencies: [{ identifier: oldDependency.identifier }],
      requiredICDs: ['0192'],
    });
    const response = await send(
      'PUT',
      `${BASE}/${process.identifier}`,
      processForm({
        domain: 'logistics',
        title: 'Despatch',
        alias: 'despatch',
        qualifiedIdentifier: 'cenbii-procid-ubl::urn:despatch',
        restricted: true,
        visible: false,
        documentTypes: [{ identifier: newType.identifier }],
        dependencies: [{ qualifiedIdentifier: newDependency.qualifiedIdentifier }],
        requiredICDs: ['9915'],
      }),
      t.users.authority,
    );
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('application/vnd.registry.processes.update.v1+json;charset=UTF-8');
    const updated = response.json();
    expect(updated).toMatchObject({
      identifier: process.identifier,
      domain: 'logistics',
      title: 'Despatch',
      alias: 'despatch',
      qualifiedIdentifier: 'cenbii-procid-ubl::urn:despatch',
      restricted: true,
      visible: false,
      requiredICDs: ['9915'],
    });
    expect(identifiers(updated.documentTypes)).toEqual([newType.identifier]);
    expect(identifiers(updated.dependencies)).toEqual([newDependency.identifier]);
    expect((await get(`${BASE}/${process.identifier}`)).json()).toEqual(updated);
  });

  it('keeps its own qualified identifier on update without a conflict, and removes the alias when absent', async () => {
    const process = await addProcess(t.app, t.users.admin, { alias: 'old' });
    const response = await send(
      'PUT',
      `${BASE}/${process.identifier}`,
      processForm({ qualifiedIdentifier: process.qualifiedIdentifier }),
    );
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().alias).toBeNull();
  });
});

describe('validation', () => {
  it('reports a missing domain exactly as the specification says, on add and on update', async () => {
    const existing = await addProcess(t.app, t.users.admin);
    for (const [method, url] of [
      ['POST', BASE],
      ['PUT', `${BASE}/${existing.identifier}`],
    ] as const) {
      expectSpecifiedValidationError(await send(method, url, processForm({ domain: undefined })), url, {
        objectName: FORM,
        field: 'domain',
        code: 'NotNull',
        rejectedValue: null,
        defaultMessage: 'must not be null',
      });
    }
  });

  it('lists every missing property at once', async () => {
    const body = expectErrorBody(
      await send('POST', BASE, {}),
      400,
      `Validation failed for object='${FORM}'. Error count: 9`,
    );
    for (const field of [
      'domain',
      'qualifiedIdentifier',
      'restricted',
      'visible',
      'capabilities',
      'documentTypes',
      'dependencies',
      'requiredICDs',
    ]) {
      expectFieldError(body, FORM, field, 'NotNull', 'must not be null');
    }
    expectFieldError(body, FORM, 'title', 'NotEmpty', 'must not be empty');
  });

  it('reports wrong types as binding failures, ICDs not of four digits, duplicates and an empty title together', async () => {
    const documentType = await addDocumentType(t.app, t.users.admin);
    const body = expectErrorBody(
      await send(
        'POST',
        BASE,
        processForm({
          title: '',
          restricted: 'false',
          visible: 1,
          requiredICDs: ['0192', '12345', '0192'],
          documentTypes: [{ identifier: documentType.identifier }, { identifier: documentType.identifier }],
          dependencies: [{ identifier: 'not-a-uuid' }],
        }),
      ),
      400,
    );
    expectFieldError(body, FORM, 'title', 'NotEmpty', 'must not be empty');
    expect(expectFieldError(body, FORM, 'restricted', 'typeMismatch')).toMatchObject({
      bindingFailure: true,
      rejectedValue: 'false',
    });
    expect(expectFieldError(body, FORM, 'visible', 'typeMismatch').codes).toEqual([
      `typeMismatch.${FORM}.visible`,
      'typeMismatch.visible',
      'typeMismatch.Boolean',
      'typeMismatch',
    ]);
    expect(expectFieldError(body, FORM, 'requiredICDs[1]', 'Icd')).toMatchObject({
      rejectedValue: '12345',
      bindingFailure: false,
    });
    expectFieldError(body, FORM, 'requiredICDs', 'UniqueElements');
    expectFieldError(body, FORM, 'documentTypes', 'UniqueElements');
    expect(expectFieldError(body, FORM, 'dependencies[0].identifier', 'typeMismatch').bindingFailure).toBe(true);
    expect(body.message).toBe(`Validation failed for object='${FORM}'. Error count: ${body.errors.length}`);
    expect(body.errors).toHaveLength(7);
  });

  it('refuses a required ICD the registry does not know, once the form is otherwise valid', async () => {
    const body = expectErrorBody(await send('POST', BASE, processForm({ requiredICDs: ['0192', '1234'] })), 400);
    expect(expectFieldError(body, FORM, 'requiredICDs[1]', 'Icd')).toMatchObject({
      rejectedValue: '1234',
      defaultMessage: 'ICD 1234 is not one of the ICDs of the specification (no Peppol code list is loaded)',
    });
    expect(body.errors).toHaveLength(1);
  });

  it.each([
    ['no separator', 'just-a-value'],
    ['an empty scheme', '::value'],
    ['an empty scheme before a second separator', '::a::b'],
    ['an empty value', 'scheme::'],
  ])('refuses a qualified identifier with %s', async (_case, qualifiedIdentifier) => {
    const body = expectErrorBody(
      await send('POST', BASE, processForm({ qualifiedIdentifier })),
      400,
      /Error count: 1$/,
    );
    expect(expectFieldError(body, FORM, 'qualifiedIdentifier', 'typeMismatch').bindingFailure).toBe(true);
  });

  it('refuses an object qualified identifier with an empty value', async () => {
    const body = expectErrorBody(
      await send('POST', BASE, processForm({ qualifiedIdentifier: { scheme: 'cenbii-procid-ubl', value: '' } })),
      400,
    );
    expect(body.errors.map((error: { field: string }) => error.field)).toEqual(['qualifiedIdentifier']);
  });

  it('refuses a qualified identifier too long for the catalogue, in either form, instead of failing to store it', async () => {
    // ASCII: a letter beyond it is refused for itself (PrintableAscii).
    for (const qualifiedIdentifier of [
      `cenbii-procid-ubl::${'x'.repeat(1500)}`,
      { scheme: 'cenbii-procid-ubl', value: 'x'.repeat(1500) },
    ]) {
      const body = expectErrorBody(await send('POST', BASE, processForm({ qualifiedIdentifier })), 400);
      expect(body.errors.map((error: { field: string }) => error.field)).toEqual(['qualifiedIdentifier']);
    }
  });

  it('reports every unknown reference at its index, and adds nothing', async () => {
    const qualifiedIdentifier = `cenbii-procid-ubl::${unique('never-added')}`;
    const body = expectErrorBody(
      await send(
        'POST',
        BASE,
        processForm({
          qualifiedIdentifier,
          capabilities: [{ identifier: UNKNOWN }],
          documentTypes: [{ qualifiedIdentifier: 'busdox-docid-qns::nothing' }],
          dependencies: [{ qualifiedIdentifier: { scheme: 'cenbii-procid-ubl', value: 'nothing' } }],
        }),
      ),
      400,
      `Validation failed for object='${FORM}'. Error count: 3`,
    );
    expect((expectFieldError(body, FORM, 'capabilities[0]', 'NotFound').codes as string[])[2]).toBe(
      'NotFound.CapabilityIdentifiable',
    );
    expect(expectFieldError(body, FORM, 'documentTypes[0]', 'NotFound').defaultMessage).toBe(
      "no document type with identifier 'busdox-docid-qns::nothing'",
    );
    expect(expectFieldError(body, FORM, 'dependencies[0]', 'NotFound').defaultMessage).toBe(
      "no process with identifier 'cenbii-procid-ubl::nothing'",
    );
    const search = await get(`${BASE}?query=${encodeURIComponent(qualifiedIdentifier)}`);
    expect(search.json().totalElements).toBe(0);
  });

  it('refuses a process that depends on itself', async () => {
    const process = await addProcess(t.app, t.users.admin);
    const body = expectErrorBody(
      await send(
        'PUT',
        `${BASE}/${process.identifier}`,
        processForm({
          qualifiedIdentifier: process.qualifiedIdentifier,
          dependencies: [{ identifier: process.identifier }],
        }),
      ),
      400,
      /Error count: 1$/,
    );
    expectFieldError(body, FORM, 'dependencies', 'SelfDependency', 'a process cannot depend on itself');
  });
});

describe('409', () => {
  it('answers 409 for a duplicate qualified identifier on add and on update', async () => {
    const existing = await addProcess(t.app, t.users.admin);
    expect(
      expectErrorBody(
        await send('POST', BASE, processForm({ qualifiedIdentifier: existing.qualifiedIdentifier })),
        409,
        `A process with qualified identifier '${existing.qualifiedIdentifier}' already exists`,
      ),
    ).toMatchObject({ error: 'Conflict' });
    const other = await addProcess(t.app, t.users.admin);
    const [scheme, value] = existing.qualifiedIdentifier.split('::');
    expectErrorBody(
      await send('PUT', `${BASE}/${other.identifier}`, processForm({ qualifiedIdentifier: { scheme, value } })),
      409,
    );
    expect((await get(`${BASE}/${other.identifier}`)).json()).toEqual(other);
  });

  it.runIf(testDatabaseKind === 'postgres')(
    'answers 409, not 500, when a linked document type is deleted during an update',
    async () => {
      const process = await addProcess(t.app, t.users.admin);
      const documentType = await addDocumentType(t.app, t.users.admin);
      const updating = whileDeleting(t.db, 'DELETE FROM document_types WHERE id = $1', [documentType.identifier], () =>
        send(
          'PUT',
          `${BASE}/${process.identifier}`,
          processForm({
            qualifiedIdentifier: process.qualifiedIdentifier,
            title: 'Changed',
            documentTypes: [{ identifier: documentType.identifier }],
          }),
        ),
      );
      expectErrorBody(
        await updating,
        409,
        'A resource named in documentTypes was deleted meanwhile; nothing was changed',
      );
      expect((await get(`${BASE}/${process.identifier}`)).json()).toEqual(process);
    },
  );

  it('refuses to delete a process that participants use or that other processes depend on, naming them', async () => {
    const used = await addProcess(t.app, t.users.admin);
    await insertParticipant(t.db, t.fixture.serviceProviderId, [used.identifier]);
    expectErrorBody(
      await remove(`${BASE}/${used.identifier}`),
      409,
      `Process '${used.title}' is still used by 1 participant(s)`,
    );

    const base = await addProcess(t.app, t.users.admin);
    const dependent = await addProcess(t.app, t.users.admin, { dependencies: [{ identifier: base.identifier }] });
    expectErrorBody(
      await remove(`${BASE}/${base.identifier}`),
      409,
      `Process '${base.title}' is still used by the processes that depend on it (${dependent.title} (${dependent.qualifiedIdentifier}))`,
    );
    expect((await get(`${BASE}/${base.identifier}`)).statusCode).toBe(200);

    expect((await remove(`${BASE}/${dependent.identifier}`)).statusCode).toBe(204);
    expect((await remove(`${BASE}/${base.identifier}`)).statusCode).toBe(204);
  });
});

describe('find filters', () => {
  const marker = `flt${Date.now().toString(36)}`;
  const p: Record<'a' | 'b' | 'c', { identifier: string; qualifiedIdentifier: string }> = {} as never;
  const d: Record<'one' | 'two', { identifier: string; qualifiedIdentifier: string }> = {} as never;

  beforeAll(async () => {
    d.one = await addDocumentType(t.app, t.users.admin);
    d.two = await addDocumentType(t.app, t.users.admin);
    p.a = await addProcess(t.app, t.users.admin, {
      title: `${marker} Alpha Billing`,
      alias: 'INVOICING',
      domain: `${marker}-d1`,
      requiredICDs: ['0192'],
      documentTypes: [{ identifier: d.one.identifier }],
    });
    p.b = await addProcess(t.app, t.users.admin, {
      title: `${marker} Beta`,
      alias: 'fifty%_off',
      domain: `${marker}-d2`,
      requiredICDs: ['0007', '9915'],
      restricted: true,
      dependencies: [{ identifier: p.a.identifier }],
    });
    p.c = await addProcess(t.app, t.users.admin, {
      title: `${marker} Gamma`,
      domain: `${marker}-d3`,
      visible: false,
      qualifiedIdentifier: `cenbii-procid-ubl::urn:${marker}:gamma`,
      dependencies: [{ identifier: p.a.identifier }, { identifier: p.b.identifier }],
      documentTypes: [{ identifier: d.one.identifier }, { identifier: d.two.identifier }],
    });
  });

  const domains = () => `domain=${marker}-d1&domain=${marker}-d2&domain=${marker}-d3`;
  const found = async (query: string) => {
    const response = await get(`${BASE}?${query}&sort=title&size=2000`);
    expect(response.statusCode, response.body).toBe(200);
    return identifiers(response.json().content);
  };

  it('query and its alias search: case-insensitive part of title, alias or qualified identifier', async () => {
    expect(await found(`query=${marker.toUpperCase()}%20alpha`)).toEqual([p.a.identifier]);
    expect(await found(`search=invoic&${domains()}`)).toEqual([p.a.identifier]);
    expect(await found(`query=URN:${marker}:GAM`)).toEqual([p.c.identifier]);
    expect(await found(`query=${marker}`)).toEqual([p.a.identifier, p.b.identifier, p.c.identifier]);
  });

  it('query takes % and _ literally', async () => {
    expect(await found(`query=${encodeURIComponent('%_')}&${domains()}`)).toEqual([p.b.identifier]);
    expect(await found(`query=${encodeURIComponent('a_p')}&${domains()}`)).toEqual([]);
  });

  it('domain matches any of the given values; one value works too', async () => {
    expect(await found(`domain=${marker}-d1&domain=${marker}-d3`)).toEqual([p.a.identifier, p.c.identifier]);
    expect(await found(`domain=${marker}-d2`)).toEqual([p.b.identifier]);
    expect(await found(`domain=${marker}-none`)).toEqual([]);
  });

  it('documentType takes an identifier or a qualified identifier, raw or percent-encoded', async () => {
    expect(await found(`documentType=${d.one.identifier}&${domains()}`)).toEqual([p.a.identifier, p.c.identifier]);
    expect(await found(`documentType=${encodeURIComponent(d.two.qualifiedIdentifier)}&${domains()}`)).toEqual([
      p.c.identifier,
    ]);
    expect(await found(`documentType=${d.two.qualifiedIdentifier}&${domains()}`)).toEqual([p.c.identifier]);
    expect(await found(`documentType=${UNKNOWN}&${domains()}`)).toEqual([]);
  });

  it('dependency takes an identifier or a qualified identifier', async () => {
    expect(await found(`dependency=${p.a.identifier}`)).toEqual([p.b.identifier, p.c.identifier]);
    expect(await found(`dependency=${encodeURIComponent(p.b.qualifiedIdentifier)}`)).toEqual([p.c.identifier]);
  });

  it('requiredIcd matches any of the given values and refuses an unknown ICD', async () => {
    expect(await found(`requiredIcd=0192&requiredIcd=9915&${domains()}`)).toEqual([p.a.identifier, p.b.identifier]);
    expect(await found(`requiredIcd=0007&${domains()}`)).toEqual([p.b.identifier]);
    const body = expectErrorBody(await get(`${BASE}?requiredIcd=1234`), 400);
    expectFieldError(body, 'queryParameters', 'requiredIcd[0]', 'Icd');
  });

  it('restricted and visible match exactly, and combine with the other filters', async () => {
    expect(await found(`restricted=true&${domains()}`)).toEqual([p.b.identifier]);
    expect(await found(`restricted=false&${domains()}`)).toEqual([p.a.identifier, p.c.identifier]);
    expect(await found(`visible=false&${domains()}`)).toEqual([p.c.identifier]);
    expect(await found(`visible=true&restricted=false&${domains()}`)).toEqual([p.a.identifier]);
    expect(await found(`visible=true&query=gamma&${domains()}`)).toEqual([]);
    expectFieldError(
      expectErrorBody(await get(`${BASE}?visible=maybe`), 400),
      'queryParameters',
      'visible',
      'typeMismatch',
    );
  });

  it('the processes.stream array holds exactly the union of all pages, with the same filters and sort', async () => {
    for (const query of [
      `${domains()}&sort=title,desc`,
      `query=${marker}&sort=restricted&sort=title,desc`,
      'sort=domain',
      '',
    ]) {
      const pages: unknown[] = [];
      for (let page = 0; ; page += 1) {
        const response = (await get(`${BASE}?${query}&size=2&page=${page}`)).json();
        pages.push(...response.content);
        if (response.last) break;
      }
      const stream = await get(`${BASE}?${query}&size=1&page=3`, null, { accept: STREAM });
      expect(stream.statusCode, stream.body).toBe(200);
      expect(stream.headers['content-type']).toBe(`${STREAM};charset=UTF-8`);
      expectSecurityHeaders(stream);
      expect(stream.json()).toEqual(pages);
    }
  });

  it('the array variant is an empty array when nothing matches', async () => {
    const stream = await get(`${BASE}?domain=${marker}-none`, null, { accept: STREAM });
    expect(stream.body).toBe('[]');
  });
});
