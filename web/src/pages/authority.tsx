import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, ok, page, type Problem, type Schemas } from '../api/client.js';
import { certificateExpiry, isExpired } from '../certificates.js';
import { Check, Confirm, DataTable, Field, FormProblem, Modal, Pager, problemFrom, Select, Status, useAction, useLoad, type Column } from '../components/ui.js';
import { isoToLocal, localToIso } from '../format.js';
import { contactForm } from '../forms.js';
import { useT, type TextKey, type Translate } from '../i18n.js';
import { CodeListRelease, documentTypeColumns, processColumns } from './catalogue.js';

interface Page<T> {
  content: T[];
  totalPages: number;
  totalElements: number;
}

type FieldError = (field: string) => string | undefined;

/**
 * One kind of resource the authority manages: how to list, add, update and delete it, and the fields of its form
 * (the same fields add one and, filled with its values, edit one in place).
 */
interface ResourceKind<T extends { identifier: string }, Body> {
  /** The form's id prefix: `{name}-form` adds, `{name}-edit-form` edits. */
  name: string;
  title: TextKey;
  addTitle: TextKey;
  columns: (t: Translate) => Column<T>[];
  label: (row: T) => string;
  /** `query`: the search field's text, for a kind whose API searches (`searchable`). */
  find: (page: number, size: number, query: string) => Promise<Page<T>>;
  searchable?: boolean;
  add: (body: Body) => Promise<unknown>;
  update: (identifier: string, body: Body) => Promise<unknown>;
  remove: (identifier: string) => Promise<unknown>;
  /** The request body from the form; `current` is the resource being edited. */
  body: (form: HTMLFormElement, current: T | undefined) => Body;
  Fields: (props: { current: T | undefined; error: FieldError }) => ComponentChildren;
  /** The API's field names the fields show messages for (the rest show above the button). */
  shown: string[];
}

/** A paged table of one resource with edit (in a dialog) and delete (confirmed) per row, and an add form. */
function ResourcePage<T extends { identifier: string }, Body>({ kind, nested }: { kind: ResourceKind<T, Body>; nested?: boolean }) {
  const t = useT();
  const [query, setQuery] = useState('');
  const [pageNumber, setPage] = useState(0);
  const [size, setSize] = useState(30);
  const [editing, setEditing] = useState<T | null>(null);
  const [deleting, setDeleting] = useState<T | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [notice, setNotice] = useState('');
  const list = useLoad(() => kind.find(pageNumber, size, query.trim()), [pageNumber, size, query]);
  const Heading = nested ? 'h2' : 'h1';
  const columns: Column<T>[] = [...kind.columns(t), {
    key: 'actions', label: t('actions'),
    render: (row) => (
      <div class="row-actions">
        <button type="button" aria-label={`${t('edit')} ${kind.label(row)}`} onClick={() => setEditing(row)}>{t('edit')}</button>
        <button type="button" class="danger" aria-label={`${t('delete')} ${kind.label(row)}`} onClick={() => setDeleting(row)}>{t('delete')}</button>
      </div>
    ),
  }];
  const saved = () => { setNotice(t('saved')); list.reload(); };
  const remove = async () => {
    if (!deleting) return;
    try {
      await kind.remove(deleting.identifier);
      setDeleting(null);
      setProblem(null);
      setNotice(t('deleted'));
      list.reload();
    } catch (error) {
      setProblem(problemFrom(error));
    }
  };
  return (
    <section>
      <Heading>{t(kind.title)}</Heading>
      {kind.searchable ? (
        <form class="inline" role="search" aria-label={t(kind.title)} onSubmit={(event) => event.preventDefault()}>
          <Field label={t('search')} name="query" type="search" value={query} onInput={(event) => { setQuery(event.currentTarget.value); setPage(0); }} />
        </form>
      ) : null}
      {notice ? <Status text={notice} /> : null}
      <FormProblem problem={list.problem} />
      <DataTable caption={t(kind.title)} columns={columns} rows={list.data?.content} loading={list.loading} rowKey={(row) => row.identifier} placeholderRows={3} />
      <Pager page={pageNumber} size={size} totalPages={list.data?.totalPages ?? 1} totalElements={list.data?.totalElements ?? 0} onPage={setPage} onSize={(value) => { setSize(value); setPage(0); }} />
      <details class="card">
        <summary>{t(kind.addTitle)}</summary>
        <ResourceForm kind={kind} done={saved} />
      </details>
      <Modal open={editing !== null} wide title={`${t('edit')}: ${editing ? kind.label(editing) : ''}`} onClose={() => setEditing(null)}>
        {editing ? <ResourceForm key={editing.identifier} kind={kind} current={editing} done={() => { setEditing(null); saved(); }} cancel={() => setEditing(null)} /> : null}
      </Modal>
      <Confirm open={deleting !== null} title={t('delete')} confirmLabel={t('delete')} onConfirm={remove} onCancel={() => { setDeleting(null); setProblem(null); }}>
        <p>{t('confirmDelete', { name: deleting ? kind.label(deleting) : '' })}</p>
        <FormProblem problem={problem} />
      </Confirm>
    </section>
  );
}

/** Adds a resource (POST), or with `current` updates it (PUT); the API's messages show at their fields. */
function ResourceForm<T extends { identifier: string }, Body>(props: { kind: ResourceKind<T, Body>; current?: T; done: () => void; cancel?: () => void }) {
  const { kind, current } = props;
  const t = useT();
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const body = kind.body(form, current);
    return action.run(() => (current ? kind.update(current.identifier, body) : kind.add(body)), () => { if (!current) form.reset(); props.done(); });
  };
  const error: FieldError = (field) => action.problem?.fields[field];
  const Fields = kind.Fields;
  return (
    <form id={`${kind.name}-${current ? 'edit-' : ''}form`} onSubmit={submit}>
      <Fields current={current} error={error} />
      <FormProblem problem={action.problem} shown={kind.shown} />
      <div class="buttons">
        <button type="submit" class="primary" disabled={action.busy}>{action.busy ? t('working') : current ? t('save') : t('add')}</button>
        {props.cancel ? <button type="button" onClick={props.cancel}>{t('cancel')}</button> : null}
      </div>
    </form>
  );
}

const pageQuery = (page: number, size: number) => ({ params: { query: { page, size } } });
const allQuery = { params: { query: { size: 2000 } } };
const byId = (identifier: string) => ({ params: { path: { identifier } } });
const text = (form: HTMLFormElement, name: string) => String(new FormData(form).get(name) ?? '').trim();
const optional = (value: string) => value || undefined;
const firstError = (error: FieldError, ...fields: string[]) => fields.map(error).find(Boolean);

function useOptions<T>(load: () => Promise<Page<T>>, option: (row: T) => [string, string]): Array<[string, string]> {
  const rows = useLoad(load, []);
  return (rows.data?.content ?? []).map(option);
}

type ServiceProvider = Schemas['ServiceProviderDetails'];
const serviceProviders: ResourceKind<ServiceProvider, Schemas['ServiceProviderForm']> = {
  name: 'service-provider', title: 'serviceProviders', addTitle: 'addServiceProvider', label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'accessPoint', label: t('accessPoint'), render: (row) => row.accessPoint?.title ?? '' },
  ],
  find: (number, size) => page(api.GET('/rest/api/service-providers', pageQuery(number, size))),
  add: (body) => ok(api.POST('/rest/api/service-providers', { body })),
  update: (identifier, body) => ok(api.PUT('/rest/api/service-providers/{identifier}', { ...byId(identifier), body })),
  remove: (identifier) => ok(api.DELETE('/rest/api/service-providers/{identifier}', byId(identifier))),
  body: (form) => ({ title: text(form, 'title'), accessPoint: { identifier: text(form, 'accessPoint') } }),
  Fields: ServiceProviderFields,
  shown: ['title', 'accessPoint'],
};

function ServiceProviderFields({ current, error }: { current: ServiceProvider | undefined; error: FieldError }) {
  const t = useT();
  const accessPoints = useOptions(() => page(api.GET('/rest/api/accessPoints', allQuery)), (point) => [point.identifier, point.title]);
  return (
    <>
      <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
      <Select label={t('accessPoint')} name="accessPoint" options={accessPoints} initial={current?.accessPoint?.identifier} error={firstError(error, 'accessPoint', 'accessPoint.identifier')} />
    </>
  );
}

type AccessPointProvider = Schemas['AccessPointProvider'];
const accessPointProviders: ResourceKind<AccessPointProvider, Schemas['AccessPointProviderForm']> = {
  name: 'access-point-provider', title: 'accessPointProviders', addTitle: 'addAccessPointProvider', label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'contact', label: t('contact'), render: (row) => [row.contact?.name, row.contact?.email].filter(Boolean).join(', ') },
  ],
  find: (number, size) => page(api.GET('/rest/api/access-point-providers', pageQuery(number, size))),
  add: (body) => ok(api.POST('/rest/api/access-point-providers', { body })),
  update: (identifier, body) => ok(api.PUT('/rest/api/access-point-providers/{identifier}', { ...byId(identifier), body })),
  remove: (identifier) => ok(api.DELETE('/rest/api/access-point-providers/{identifier}', byId(identifier))),
  body: (form) => ({
    title: text(form, 'title'),
    contact: contactForm({ name: text(form, 'contact.name'), email: text(form, 'contact.email'), phoneNumber: text(form, 'contact.phoneNumber') }),
  }),
  Fields: AccessPointProviderFields,
  shown: ['title', 'contact'],
};

function AccessPointProviderFields({ current, error }: { current: AccessPointProvider | undefined; error: FieldError }) {
  const t = useT();
  return (
    <>
      <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
      <Field label={t('contactName')} name="contact.name" required defaultValue={current?.contact?.name} error={firstError(error, 'contact.name', 'contact')} />
      <Field label={t('email')} name="contact.email" type="email" defaultValue={current?.contact?.email ?? ''} error={error('contact.email')} />
      <Field label={t('phone')} name="contact.phoneNumber" type="tel" defaultValue={current?.contact?.phoneNumber ?? ''} error={error('contact.phoneNumber')} />
    </>
  );
}

type AccessPoint = Schemas['AccessPoint'];
type Endpoint = Schemas['Endpoint'];

function Endpoints({ endpoints }: { endpoints: Endpoint[] }) {
  const t = useT();
  return (
    <ul class="endpoints">
      {endpoints.map((endpoint) => {
        const expiry = certificateExpiry(endpoint.certificate);
        const expired = expiry !== undefined && isExpired(expiry);
        return (
          <li key={endpoint.url}>
            <code class="id">{endpoint.url}</code> · {endpoint.transportProfile.value}
            {endpoint.transportProfile.certificateTypes.length > 0 ? <> · {t('certificateTypes')}: {endpoint.transportProfile.certificateTypes.join(', ')}</> : null}
            {' · '}{expiry
              ? <span class={`expiry${expired ? ' failed' : ''}`}>{t('certificateExpires')} {expiry.slice(0, 10)}{expired ? ` (${t('expired')})` : ''}</span>
              : <span class="hint">{t('noCertificate')}</span>}
            {endpoint.requireBusinessLevelSignature ? <> · {t('requireBusinessLevelSignature')}</> : null}
          </li>
        );
      })}
    </ul>
  );
}

/** An endpoint as a form takes it back: a kept endpoint's profile by value, its certificate as served. */
function endpointForm(endpoint: Endpoint): Schemas['EndpointForm'] {
  const { transportProfile, ...rest } = endpoint;
  return { ...rest, transportProfile: { value: transportProfile.value, certificateTypes: transportProfile.certificateTypes } };
}

const accessPoints: ResourceKind<AccessPoint, Schemas['AccessPointForm']> = {
  name: 'access-point', title: 'accessPoints', addTitle: 'addAccessPoint', label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'provider', label: t('provider'), render: (row) => row.provider.title },
    { key: 'endpoints', label: t('endpoints'), render: (row) => <Endpoints endpoints={row.endpoints} /> },
  ],
  find: (number, size) => page(api.GET('/rest/api/accessPoints', pageQuery(number, size))),
  add: (body) => ok(api.POST('/rest/api/accessPoints', { body })),
  update: (identifier, body) => ok(api.PUT('/rest/api/accessPoints/{identifier}', { ...byId(identifier), body })),
  remove: (identifier) => ok(api.DELETE('/rest/api/accessPoints/{identifier}', byId(identifier))),
  body: (form, current) => {
    const url = text(form, 'endpoints[0].url');
    const [first, ...others] = current?.endpoints ?? [];
    const endpoint: Schemas['EndpointForm'] = {
      url,
      transportProfile: {
        identifier: text(form, 'endpoints[0].transportProfile'),
        certificateTypes: text(form, 'endpoints[0].transportProfile.certificateTypes').split(',').map((type) => type.trim()).filter(Boolean),
      },
      // Left empty while editing: the endpoint keeps the certificate it has.
      certificate: optional(text(form, 'endpoints[0].certificate')) ?? first?.certificate,
      serviceDescription: optional(text(form, 'endpoints[0].serviceDescription')),
      technicalContactUrl: optional(text(form, 'endpoints[0].technicalContactUrl')),
      serviceActivationDate: localToIso(text(form, 'endpoints[0].serviceActivationDate')),
      serviceExpirationDate: localToIso(text(form, 'endpoints[0].serviceExpirationDate')),
      requireBusinessLevelSignature: new FormData(form).has('endpoints[0].requireBusinessLevelSignature'),
    };
    // The form edits the first endpoint; the others stay as they are.
    return { title: text(form, 'title'), provider: { identifier: text(form, 'provider') }, endpoints: [...(url ? [endpoint] : []), ...others.map(endpointForm)] };
  },
  Fields: AccessPointFields,
  shown: ['title', 'provider', 'endpoints[0]'],
};

function AccessPointFields({ current, error }: { current: AccessPoint | undefined; error: FieldError }) {
  const t = useT();
  const providers = useOptions(() => page(api.GET('/rest/api/access-point-providers', allQuery)), (provider) => [provider.identifier, provider.title]);
  const profiles = useLoad(() => page(api.GET('/rest/api/transport-profiles', allQuery)), []);
  const endpoint = current?.endpoints[0];
  const expiry = certificateExpiry(endpoint?.certificate);
  const field = (name: string) => `endpoints[0].${name}`;
  return (
    <>
      <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
      <Select label={t('provider')} name="provider" options={providers} initial={current?.provider.identifier} error={firstError(error, 'provider', 'provider.identifier')} />
      <fieldset class="grid">
        <legend>{t('endpoint')}</legend>
        <Field label={t('url')} name={field('url')} type="url" placeholder="https://" defaultValue={endpoint?.url} error={firstError(error, field('url'), 'endpoints[0]', 'endpoints')} />
        <Select label={t('transportProfile')} name={field('transportProfile')} error={firstError(error, field('transportProfile'), field('transportProfile.identifier'))}
          initial={(profiles.data?.content ?? []).find((profile) => profile.value === endpoint?.transportProfile.value)?.identifier}
          options={(profiles.data?.content ?? []).map((profile) => [profile.identifier, `${profile.title} (${profile.value})`])} />
        <Field label={t('certificateTypes')} name={field('transportProfile.certificateTypes')} hint={t('commaSeparated')}
          defaultValue={endpoint?.transportProfile.certificateTypes.join(', ')} error={error(field('transportProfile.certificateTypes'))} />
        <Field label={t('certificate')} name={field('certificate')} multiline spellcheck={false} placeholder="-----BEGIN CERTIFICATE-----"
          hint={expiry ? t('certificateKept', { date: expiry.slice(0, 10) }) : t('certificateHint')} error={error(field('certificate'))} />
        <Field label={t('serviceDescription')} name={field('serviceDescription')} defaultValue={endpoint?.serviceDescription} error={error(field('serviceDescription'))} />
        <Field label={t('technicalContactUrl')} name={field('technicalContactUrl')} type="url" placeholder="https:// mailto:" defaultValue={endpoint?.technicalContactUrl} error={error(field('technicalContactUrl'))} />
        <Field label={t('serviceActivationDate')} name={field('serviceActivationDate')} type="datetime-local" step={1} defaultValue={isoToLocal(endpoint?.serviceActivationDate)} error={error(field('serviceActivationDate'))} />
        <Field label={t('serviceExpirationDate')} name={field('serviceExpirationDate')} type="datetime-local" step={1} defaultValue={isoToLocal(endpoint?.serviceExpirationDate)} error={error(field('serviceExpirationDate'))} />
        <Check label={t('requireBusinessLevelSignature')} name={field('requireBusinessLevelSignature')} defaultChecked={endpoint?.requireBusinessLevelSignature} />
      </fieldset>
    </>
  );
}

type TransportProfile = Schemas['TransportProfile'];
const transportProfiles: ResourceKind<TransportProfile, Schemas['TransportProfileForm']> = {
  name: 'transport-profile', title: 'transportProfiles', addTitle: 'addTransportProfile', label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'value', label: t('value'), render: (row) => <code class="id">{row.value}</code> },
    { key: 'restricted', label: t('restricted'), render: (row) => (row.restricted ? '✓' : '') },
  ],
  find: (number, size) => page(api.GET('/rest/api/transport-profiles', pageQuery(number, size))),
  add: (body) => ok(api.POST('/rest/api/transport-profiles', { body })),
  update: (identifier, body) => ok(api.PUT('/rest/api/transport-profiles/{identifier}', { ...byId(identifier), body })),
  remove: (identifier) => ok(api.DELETE('/rest/api/transport-profiles/{identifier}', byId(identifier))),
  body: (form) => ({ value: text(form, 'value'), title: text(form, 'title'), restricted: new FormData(form).has('restricted') }),
  Fields: TransportProfileFields,
  shown: ['value', 'title'],
};

function TransportProfileFields({ current, error }: { current: TransportProfile | undefined; error: FieldError }) {
  const t = useT();
  return (
    <>
      <Field label={t('value')} name="value" required defaultValue={current?.value} error={error('value')} />
      <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
      <Check label={t('restricted')} name="restricted" defaultChecked={current?.restricted} />
    </>
  );
}

type User = Schemas['User'];
const ROLES: Schemas['Role'][] = ['SERVICE_PROVIDER', 'ACCESS_POINT_PROVIDER', 'REGISTRY_AUTHORITY', 'ADMIN'];

const users: ResourceKind<User, Schemas['AddUserForm']> = {
  name: 'user', title: 'users', addTitle: 'addUser', label: (row) => row.username,
  columns: (t) => [
    { key: 'username', label: t('username'), render: (row) => row.username },
    { key: 'role', label: t('role'), render: (row) => row.role },
    { key: 'provider', label: t('provider'), render: (row) => row.serviceProvider?.title ?? row.accessPointProvider?.title ?? '' },
  ],
  find: (number, size) => page(api.GET('/rest/api/users', pageQuery(number, size))),
  add: (body) => ok(api.POST('/rest/api/users', { body })),
  // Without a new password the user keeps the one it has.
  update: (identifier, { password, ...body }) => ok(api.PUT('/rest/api/users/{identifier}', { ...byId(identifier), body: { ...body, ...(password ? { password } : {}) } })),
  remove: (identifier) => ok(api.DELETE('/rest/api/users/{identifier}', byId(identifier))),
  body: (form) => {
    const role = text(form, 'role') as Schemas['Role'];
    const provider = { identifier: text(form, 'provider') };
    return {
      username: text(form, 'username'), password: String(new FormData(form).get('password') ?? ''), role,
      ...(role === 'SERVICE_PROVIDER' ? { serviceProvider: provider } : {}),
      ...(role === 'ACCESS_POINT_PROVIDER' ? { accessPointProvider: provider } : {}),
    };
  },
  Fields: UserFields,
  shown: ['username', 'password', 'role', 'serviceProvider', 'accessPointProvider'],
};

function UserFields({ current, error }: { current: User | undefined; error: FieldError }) {
  const t = useT();
  const [role, setRole] = useState<Schemas['Role']>((current?.role as Schemas['Role'] | undefined) ?? 'SERVICE_PROVIDER');
  const serviceProviderOptions = useOptions(() => page(api.GET('/rest/api/service-providers', allQuery)), (provider) => [provider.identifier, provider.title]);
  const accessPointProviderOptions = useOptions(() => page(api.GET('/rest/api/access-point-providers', allQuery)), (provider) => [provider.identifier, provider.title]);
  const providers = role === 'SERVICE_PROVIDER' ? serviceProviderOptions : role === 'ACCESS_POINT_PROVIDER' ? accessPointProviderOptions : undefined;
  return (
    <>
      <Field label={t('username')} name="username" autocomplete="off" required defaultValue={current?.username} error={error('username')} />
      <Field label={current ? t('newPassword') : t('password')} name="password" type="password" autocomplete="new-password" required={!current} minLength={12}
        hint={current ? t('passwordKept') : undefined} error={error('password')} />
      <Select label={t('role')} name="role" value={role} options={ROLES.map((value) => [value, value])} onChange={(event) => setRole(event.currentTarget.value as Schemas['Role'])} error={error('role')} />
      {providers ? <Select label={t('provider')} name="provider" options={providers} initial={(current?.serviceProvider ?? current?.accessPointProvider)?.identifier}
        error={firstError(error, 'serviceProvider', 'serviceProvider.identifier', 'accessPointProvider', 'accessPointProvider.identifier')} /> : null}
    </>
  );
}

export const ServiceProviders = () => <ResourcePage kind={serviceProviders} />;
export const AccessPointProviders = () => <ResourcePage kind={accessPointProviders} />;
export const AccessPoints = () => <ResourcePage kind={accessPoints} />;
export const TransportProfiles = () => <ResourcePage kind={transportProfiles} />;
export const Users = () => <ResourcePage kind={users} />;
type Process = Schemas['Process'];
const identifiers = (rows: ReadonlyArray<{ identifier: string }> | undefined) => (rows ?? []).map(({ identifier }) => ({ identifier }));
const list = (value: string) => value.split(',').map((item) => item.trim()).filter(Boolean);

/** Processes: the fields an authority edits; links (document types, dependencies, capabilities) are kept as they are. */
const processes: ResourceKind<Process, Schemas['ProcessForm']> = {
  name: 'process', title: 'processes', addTitle: 'addProcess', label: (row) => row.title, searchable: true, columns: processColumns,
  find: (number, size, query) => page(api.GET('/rest/api/processes', { params: { query: { query: query || undefined, page: number, size, sort: ['title'] } } })),
  add: (body) => ok(api.POST('/rest/api/processes', { body })),
  update: (identifier, body) => ok(api.PUT('/rest/api/processes/{identifier}', { ...byId(identifier), body })),
  remove: (identifier) => ok(api.DELETE('/rest/api/processes/{identifier}', byId(identifier))),
  body: (form, current) => ({
    qualifiedIdentifier: text(form, 'qualifiedIdentifier'), title: text(form, 'title'), domain: text(form, 'domain'),
    ...(text(form, 'alias') ? { alias: text(form, 'alias') } : {}),
    restricted: new FormData(form).has('restricted'), visible: new FormData(form).has('visible'),
    requiredICDs: list(text(form, 'requiredICDs')) as Schemas['ICD'][],
    capabilities: identifiers(current?.capabilities), documentTypes: identifiers(current?.documentTypes), dependencies: identifiers(current?.dependencies),
  }),
  Fields: ProcessFields,
  shown: ['qualifiedIdentifier', 'title', 'domain', 'alias', 'requiredICDs'],
};

function ProcessFields({ current, error }: { current: Process | undefined; error: FieldError }) {
  const t = useT();
  return (
    <>
      <Field label={t('identifier')} name="qualifiedIdentifier" required defaultValue={current?.qualifiedIdentifier} placeholder="cenbii-procid-ubl::urn:..." error={error('qualifiedIdentifier')} />
      <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
      <Field label={t('domain')} name="domain" defaultValue={current?.domain} error={error('domain')} />
      <Field label={t('alias')} name="alias" defaultValue={current?.alias ?? ''} error={error('alias')} />
      <Field label={t('requiredIcds')} name="requiredICDs" hint={t('commaSeparated')} defaultValue={current?.requiredICDs.join(', ')} error={firstError(error, 'requiredICDs', 'requiredICDs[0]')} />
      <Check label={t('restricted')} name="restricted" defaultChecked={current?.restricted} />
      <Check label={t('visible')} name="visible" defaultChecked={current?.visible ?? true} />
    </>
  );
}

type DocumentType = Schemas['DocumentType'];
const documentTypes: ResourceKind<DocumentType, Schemas['DocumentTypeForm']> = {
  name: 'document-type', title: 'documentTypes', addTitle: 'addDocumentType', label: (row) => row.title, columns: documentTypeColumns,
  find: (number, size) => page(api.GET('/rest/api/document-types', { params: { query: { page: number, size, sort: ['title'] } } })),
  add: (body) => ok(api.POST('/rest/api/document-types', { body })),
  update: (identifier, body) => ok(api.PUT('/rest/api/document-types/{identifier}', { ...byId(identifier), body })),
  remove: (identifier) => ok(api.DELETE('/rest/api/document-types/{identifier}', byId(identifier))),
  body: (form, current) => ({
    qualifiedIdentifier: text(form, 'qualifiedIdentifier'), title: text(form, 'title'), visible: new FormData(form).has('visible'),
    processes: identifiers(current?.processes),
  }),
  Fields: DocumentTypeFields,
  shown: ['qualifiedIdentifier', 'title'],
};

function DocumentTypeFields({ current, error }: { current: DocumentType | undefined; error: FieldError }) {
  const t = useT();
  return (
    <>
      <Field label={t('identifier')} name="qualifiedIdentifier" required defaultValue={current?.qualifiedIdentifier} placeholder="busdox-docid-qns::urn:..." error={error('qualifiedIdentifier')} />
      <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
      <Check label={t('visible')} name="visible" defaultChecked={current?.visible ?? true} />
    </>
  );
}

/** The catalogue as the authority keeps it: the code-list release, then processes and document types, each editable. */
export function CatalogueAdmin() {
  const t = useT();
  return (
    <section>
      <h1>{t('catalogue')}</h1>
      <CodeListRelease />
      <ResourcePage kind={processes} nested />
      <ResourcePage kind={documentTypes} nested />
    </section>
  );
}
