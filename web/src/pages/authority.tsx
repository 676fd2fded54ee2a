import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, ok, page, type Problem, type Schemas } from '../api/client.js';
import { certificateExpiry, isExpired } from '../certificates.js';
import { Confirm, DataTable, Field, FormProblem, Pager, problemFrom, Select, Status, useAction, useLoad, type Column } from '../components/ui.js';
import { contactForm } from '../forms.js';
import { useT, type TextKey } from '../i18n.js';
import { Catalogue } from './catalogue.js';

interface Page<T> {
  content: T[];
  totalPages: number;
  totalElements: number;
}

interface Named {
  identifier: string;
  title?: string;
  username?: string;
}

/** One resource the authority manages: a paged table, an add form, delete with confirmation. */
function ResourcePage<T extends Named>(props: {
  title: TextKey; addTitle: TextKey; columns: Column<T>[];
  find: (page: number, size: number) => Promise<Page<T>>;
  remove: (identifier: string) => Promise<unknown>;
  form: (done: () => void) => ComponentChildren;
}) {
  const t = useT();
  const [pageNumber, setPage] = useState(0);
  const [size, setSize] = useState(30);
  const [deleting, setDeleting] = useState<T | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [notice, setNotice] = useState('');
  const list = useLoad(() => props.find(pageNumber, size), [pageNumber, size]);
  const label = (row: T) => row.title ?? row.username ?? row.identifier;
  const columns: Column<T>[] = [...props.columns, {
    key: 'actions', label: t('actions'),
    render: (row) => <button type="button" class="danger" aria-label={`${t('delete')} ${label(row)}`} onClick={() => setDeleting(row)}>{t('delete')}</button>,
  }];
  const remove = async () => {
    if (!deleting) return;
    try {
      await props.remove(deleting.identifier);
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
      <h1>{t(props.title)}</h1>
      {notice ? <Status text={notice} /> : null}
      <FormProblem problem={list.problem} />
      <DataTable caption={t(props.title)} columns={columns} rows={list.data?.content} loading={list.loading} rowKey={(row) => row.identifier} placeholderRows={3} />
      <Pager page={pageNumber} size={size} totalPages={list.data?.totalPages ?? 1} totalElements={list.data?.totalElements ?? 0} onPage={setPage} onSize={(value) => { setSize(value); setPage(0); }} />
      <details class="card">
        <summary>{t(props.addTitle)}</summary>
        {props.form(() => { setNotice(t('saved')); list.reload(); })}
      </details>
      <Confirm open={deleting !== null} title={t('delete')} confirmLabel={t('delete')} onConfirm={remove} onCancel={() => { setDeleting(null); setProblem(null); }}>
        <p>{t('confirmDelete', { name: deleting ? label(deleting) : '' })}</p>
        <FormProblem problem={problem} />
      </Confirm>
    </section>
  );
}

/** Submits a form and keeps the API's problem for the fields. */
function useSubmit(send: () => Promise<unknown>, done: () => void) {
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    return action.run(send, () => { form.reset(); done(); });
  };
  return { problem: action.problem, busy: action.busy, submit, error: (field: string) => action.problem?.fields[field] };
}

const pageQuery = (page: number, size: number) => ({ params: { query: { page, size } } });
const allQuery = { params: { query: { size: 2000 } } };
const byId = (identifier: string) => ({ params: { path: { identifier } } });
const text = (form: HTMLFormElement, name: string) => String(new FormData(form).get(name) ?? '').trim();

function SubmitButton({ busy }: { busy: boolean }) {
  const t = useT();
  return <button type="submit" class="primary" disabled={busy}>{busy ? t('working') : t('add')}</button>;
}

export function ServiceProviders() {
  const t = useT();
  return (
    <ResourcePage<Schemas['ServiceProviderDetails']> title="serviceProviders" addTitle="addServiceProvider"
      columns={[
        { key: 'title', label: t('title'), render: (row) => row.title },
        { key: 'accessPoint', label: t('accessPoint'), render: (row) => row.accessPoint?.title ?? '' },
      ]}
      find={(number, size) => page(api.GET('/rest/api/service-providers', pageQuery(number, size)))}
      remove={(identifier) => ok(api.DELETE('/rest/api/service-providers/{identifier}', byId(identifier)))}
      form={(done) => <ServiceProviderForm done={done} />} />
  );
}

function ServiceProviderForm({ done }: { done: () => void }) {
  const t = useT();
  const accessPoints = useLoad(() => page(api.GET('/rest/api/accessPoints', allQuery)), []);
  const form = useSubmit(() => {
    const element = document.getElementById('service-provider-form') as HTMLFormElement;
    return ok(api.POST('/rest/api/service-providers', { body: { title: text(element, 'title'), accessPoint: { identifier: text(element, 'accessPoint') } } }));
  }, done);
  return (
    <form id="service-provider-form" onSubmit={form.submit}>
      <Field label={t('title')} name="title" required error={form.error('title')} />
      <Select label={t('accessPoint')} name="accessPoint" options={(accessPoints.data?.content ?? []).map((point) => [point.identifier, point.title])} error={form.error('accessPoint') ?? form.error('accessPoint.identifier')} />
      <FormProblem problem={form.problem} shown={['title', 'accessPoint']} />
      <SubmitButton busy={form.busy} />
    </form>
  );
}

export function AccessPointProviders() {
  const t = useT();
  return (
    <ResourcePage<Schemas['AccessPointProvider']> title="accessPointProviders" addTitle="addAccessPointProvider"
      columns={[
        { key: 'title', label: t('title'), render: (row) => row.title },
        { key: 'contact', label: t('contact'), render: (row) => [row.contact?.name, row.contact?.email].filter(Boolean).join(', ') },
      ]}
      find={(number, size) => page(api.GET('/rest/api/access-point-providers', pageQuery(number, size)))}
      remove={(identifier) => ok(api.DELETE('/rest/api/access-point-providers/{identifier}', byId(identifier)))}
      form={(done) => <AccessPointProviderForm done={done} />} />
  );
}

function AccessPointProviderForm({ done }: { done: () => void }) {
  const t = useT();
  const form = useSubmit(() => {
    const element = document.getElementById('access-point-provider-form') as HTMLFormElement;
    return ok(api.POST('/rest/api/access-point-providers', {
      body: { title: text(element, 'title'), contact: contactForm({ name: text(element, 'contact.name'), email: text(element, 'contact.email'), phoneNumber: text(element, 'contact.phoneNumber') }) },
    }));
  }, done);
  return (
    <form id="access-point-provider-form" onSubmit={form.submit}>
      <Field label={t('title')} name="title" required error={form.error('title')} />
      <Field label={t('contactName')} name="contact.name" required error={form.error('contact.name') ?? form.error('contact')} />
      <Field label={t('email')} name="contact.email" type="email" error={form.error('contact.email')} />
      <Field label={t('phone')} name="contact.phoneNumber" type="tel" error={form.error('contact.phoneNumber')} />
      <FormProblem problem={form.problem} shown={['title', 'contact']} />
      <SubmitButton busy={form.busy} />
    </form>
  );
}

function Endpoints({ endpoints }: { endpoints: Schemas['Endpoint'][] }) {
  const t = useT();
  return (
    <ul class="endpoints">
      {endpoints.map((endpoint) => {
        const expiry = certificateExpiry(endpoint);
        return (
          <li key={endpoint.url}>
            <code class="id">{endpoint.url}</code> · {endpoint.transportProfile.value}
            {endpoint.transportProfile.certificateTypes.length > 0 ? <> · {t('certificateTypes')}: {endpoint.transportProfile.certificateTypes.join(', ')}</> : null}
            {expiry ? <> · {t('expires')}: <span class={isExpired(expiry) ? 'failed' : undefined}>{expiry.slice(0, 10)}{isExpired(expiry) ? ` (${t('expired')})` : ''}</span></> : null}
          </li>
        );
      })}
    </ul>
  );
}

export function AccessPoints() {
  const t = useT();
  return (
    <ResourcePage<Schemas['AccessPoint']> title="accessPoints" addTitle="addAccessPoint"
      columns={[
        { key: 'title', label: t('title'), render: (row) => row.title },
        { key: 'provider', label: t('provider'), render: (row) => row.provider.title },
        { key: 'endpoints', label: t('endpoints'), render: (row) => <Endpoints endpoints={row.endpoints} /> },
      ]}
      find={(number, size) => page(api.GET('/rest/api/accessPoints', pageQuery(number, size)))}
      remove={(identifier) => ok(api.DELETE('/rest/api/accessPoints/{identifier}', byId(identifier)))}
      form={(done) => <AccessPointForm done={done} />} />
  );
}

function AccessPointForm({ done }: { done: () => void }) {
  const t = useT();
  const providers = useLoad(() => page(api.GET('/rest/api/access-point-providers', allQuery)), []);
  const profiles = useLoad(() => page(api.GET('/rest/api/transport-profiles', allQuery)), []);
  const form = useSubmit(() => {
    const element = document.getElementById('access-point-form') as HTMLFormElement;
    const url = text(element, 'endpoints[0].url');
    const certificateTypes = text(element, 'certificateTypes').split(',').map((type) => type.trim()).filter(Boolean);
    return ok(api.POST('/rest/api/accessPoints', {
      body: {
        title: text(element, 'title'), provider: { identifier: text(element, 'provider') },
        endpoints: url ? [{ url, transportProfile: { identifier: text(element, 'transportProfile'), certificateTypes } }] : [],
      },
    }));
  }, done);
  return (
    <form id="access-point-form" onSubmit={form.submit}>
      <Field label={t('title')} name="title" required error={form.error('title')} />
      <Select label={t('provider')} name="provider" options={(providers.data?.content ?? []).map((provider) => [provider.identifier, provider.title])} error={form.error('provider') ?? form.error('provider.identifier')} />
      <fieldset>
        <legend>{t('endpoints')}</legend>
        <Field label={t('url')} name="endpoints[0].url" type="url" placeholder="https://" error={form.error('endpoints[0].url') ?? form.error('endpoints[0]')} />
        <Select label={t('transportProfile')} name="transportProfile" options={(profiles.data?.content ?? []).map((profile) => [profile.identifier, `${profile.title} (${profile.value})`])} error={form.error('endpoints[0].transportProfile')} />
        <Field label={t('certificateTypes')} name="certificateTypes" hint={t('commaSeparated')} error={form.error('endpoints[0].transportProfile.certificateTypes')} />
      </fieldset>
      <FormProblem problem={form.problem} shown={['title', 'provider', 'endpoints[0]']} />
      <SubmitButton busy={form.busy} />
    </form>
  );
}

export function TransportProfiles() {
  const t = useT();
  return (
    <ResourcePage<Schemas['TransportProfile']> title="transportProfiles" addTitle="addTransportProfile"
      columns={[
        { key: 'title', label: t('title'), render: (row) => row.title },
        { key: 'value', label: t('value'), render: (row) => <code class="id">{row.value}</code> },
        { key: 'restricted', label: t('restricted'), render: (row) => (row.restricted ? '✓' : '') },
      ]}
      find={(number, size) => page(api.GET('/rest/api/transport-profiles', pageQuery(number, size)))}
      remove={(identifier) => ok(api.DELETE('/rest/api/transport-profiles/{identifier}', byId(identifier)))}
      form={(done) => <TransportProfileForm done={done} />} />
  );
}

function TransportProfileForm({ done }: { done: () => void }) {
  const t = useT();
  const form = useSubmit(() => {
    const element = document.getElementById('transport-profile-form') as HTMLFormElement;
    return ok(api.POST('/rest/api/transport-profiles', { body: { value: text(element, 'value'), title: text(element, 'title'), restricted: new FormData(element).has('restricted') } }));
  }, done);
  return (
    <form id="transport-profile-form" onSubmit={form.submit}>
      <Field label={t('value')} name="value" required error={form.error('value')} />
      <Field label={t('title')} name="title" required error={form.error('title')} />
      <div class="check"><input type="checkbox" id="transport-profile-restricted" name="restricted" /><label for="transport-profile-restricted">{t('restricted')}</label></div>
      <FormProblem problem={form.problem} shown={['value', 'title']} />
      <SubmitButton busy={form.busy} />
    </form>
  );
}

export function Users() {
  const t = useT();
  return (
    <ResourcePage<Schemas['User']> title="users" addTitle="addUser"
      columns={[
        { key: 'username', label: t('username'), render: (row) => row.username },
        { key: 'role', label: t('role'), render: (row) => row.role },
        { key: 'provider', label: t('provider'), render: (row) => row.serviceProvider?.title ?? row.accessPointProvider?.title ?? '' },
      ]}
      find={(number, size) => page(api.GET('/rest/api/users', pageQuery(number, size)))}
      remove={(identifier) => ok(api.DELETE('/rest/api/users/{identifier}', byId(identifier)))}
      form={(done) => <UserForm done={done} />} />
  );
}

const ROLES: Schemas['Role'][] = ['SERVICE_PROVIDER', 'ACCESS_POINT_PROVIDER', 'REGISTRY_AUTHORITY', 'ADMIN'];

function UserForm({ done }: { done: () => void }) {
  const t = useT();
  const [role, setRole] = useState<Schemas['Role']>('SERVICE_PROVIDER');
  const serviceProviders = useLoad(() => page(api.GET('/rest/api/service-providers', allQuery)), []);
  const accessPointProviders = useLoad(() => page(api.GET('/rest/api/access-point-providers', allQuery)), []);
  const form = useSubmit(() => {
    const element = document.getElementById('user-form') as HTMLFormElement;
    const provider = text(element, 'provider');
    return ok(api.POST('/rest/api/users', {
      body: {
        username: text(element, 'username'), password: String(new FormData(element).get('password') ?? ''), role,
        ...(role === 'SERVICE_PROVIDER' ? { serviceProvider: { identifier: provider } } : {}),
        ...(role === 'ACCESS_POINT_PROVIDER' ? { accessPointProvider: { identifier: provider } } : {}),
      },
    }));
  }, done);
  const providers = role === 'SERVICE_PROVIDER' ? serviceProviders.data?.content : role === 'ACCESS_POINT_PROVIDER' ? accessPointProviders.data?.content : undefined;
  return (
    <form id="user-form" onSubmit={form.submit}>
      <Field label={t('username')} name="username" autocomplete="off" required error={form.error('username')} />
      <Field label={t('password')} name="password" type="password" autocomplete="new-password" required minLength={12} error={form.error('password')} />
      <Select label={t('role')} name="role" value={role} options={ROLES.map((value) => [value, value])} onChange={(event) => setRole(event.currentTarget.value as Schemas['Role'])} error={form.error('role')} />
      {providers ? <Select label={t('provider')} name="provider" options={providers.map((provider) => [provider.identifier, provider.title])}
        error={form.error('serviceProvider') ?? form.error('serviceProvider.identifier') ?? form.error('accessPointProvider') ?? form.error('accessPointProvider.identifier')} /> : null}
      <FormProblem problem={form.problem} shown={['username', 'password', 'role', 'serviceProvider', 'accessPointProvider']} />
      <SubmitButton busy={form.busy} />
    </form>
  );
}

export function CatalogueAdmin() {
  const t = useT();
  return (
    <>
      <p class="card"><strong>{t('codeListRelease')}:</strong> {t('codeListUnknown')}</p>
      <Catalogue />
    </>
  );
}
