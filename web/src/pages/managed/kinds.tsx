import { useContext, useState } from 'preact/hooks';
import type { Schemas } from '../../api/client.js';
import { certificateExpiry, expiryOf } from '../../certificates.js';
import { Check, Field, Select } from '../../components/ui.js';
import { day, isoToLocal, localToIso } from '../../format.js';
import { contactForm } from '../../forms.js';
import { I18n, useT } from '../../i18n.js';
import { CodeListRelease, documentTypeColumns, processColumns } from '../catalogue.js';
import { SignInLocks } from '../account.js';
import { roleName } from '../../words.js';
import { firstError, resourceKind, ResourcePage, text, useAll } from './engine.js';

// The kinds of resource the authority manages, each declared once (its path, table and form), and their pages.

const optional = (value: string) => value || undefined;
const choices = (rows: ReadonlyArray<{ identifier: string; title: string }>) => rows.map((row): [string, string] => [row.identifier, row.title]);

const serviceProviders = resourceKind({
  path: '/rest/api/service-providers', name: 'service-provider', title: 'serviceProviders', addTitle: 'addServiceProvider', label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'accessPoint', label: t('accessPoint'), render: (row) => row.accessPoint?.title ?? '' },
    // The command line names a provider by it: `registry import-participants --service-provider <identifier>`.
    { key: 'identifier', label: t('providerIdentifier'), render: (row) => <code class="id" title={t('providerIdentifierHint')}>{row.identifier}</code> },
  ],
  body: (form) => ({ title: text(form, 'title'), accessPoint: { identifier: text(form, 'accessPoint') } }),
  shown: ['title', 'accessPoint'],
  Fields: ({ current, error }) => {
    const t = useT();
    const accessPointChoices = choices(useAll(accessPoints));
    return (
      <>
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Select label={t('accessPoint')} name="accessPoint" options={accessPointChoices} initial={current?.accessPoint?.identifier} error={error('accessPoint')} />
      </>
    );
  },
});

const accessPointProviders = resourceKind({
  path: '/rest/api/access-point-providers', name: 'access-point-provider', title: 'accessPointProviders', addTitle: 'addAccessPointProvider', label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'contact', label: t('contact'), render: (row) => [row.contact?.name, row.contact?.email].filter(Boolean).join(', ') },
  ],
  body: (form) => ({
    title: text(form, 'title'),
    contact: contactForm({ name: text(form, 'contact.name'), email: text(form, 'contact.email'), phoneNumber: text(form, 'contact.phoneNumber') }),
  }),
  shown: ['title', 'contact', 'contact.name', 'contact.email', 'contact.phoneNumber'],
  Fields: ({ current, error }) => {
    const t = useT();
    return (
      <>
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Field label={t('contactName')} name="contact.name" required defaultValue={current?.contact?.name} error={firstError(error, 'contact.name', 'contact')} />
        <Field label={t('email')} name="contact.email" type="email" defaultValue={current?.contact?.email ?? ''} error={error('contact.email')} />
        <Field label={t('phone')} name="contact.phoneNumber" type="tel" defaultValue={current?.contact?.phoneNumber ?? ''} error={error('contact.phoneNumber')} />
      </>
    );
  },
});

type Endpoint = Schemas['Endpoint'];

function Endpoints({ endpoints }: { endpoints: Endpoint[] }) {
  const t = useT();
  const { language } = useContext(I18n);
  return (
    <ul class="endpoints">
      {endpoints.map((endpoint) => {
        const expiry = certificateExpiry(endpoint.certificate);
        const { state, daysLeft } = expiry === undefined ? { state: 'valid', daysLeft: 0 } : expiryOf(expiry);
        return (
          <li key={endpoint.url}>
            <code class="id">{endpoint.url}</code> · {endpoint.transportProfile.value}
            {endpoint.transportProfile.certificateTypes.length > 0 ? <> · {t('certificateTypes')}: {endpoint.transportProfile.certificateTypes.join(', ')}</> : null}
            {' · '}{expiry
              ? <span class={`expiry ${state}`}>{t('certificateExpires')} {day(expiry.slice(0, 10), language)}
                {state === 'expired' ? ` (${t('expired')})` : state === 'expiring' ? ` (${t('expiresInDays', { days: daysLeft })})` : ''}</span>
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

const accessPoints = resourceKind({
  path: '/rest/api/accessPoints', name: 'access-point', title: 'accessPoints', addTitle: 'addAccessPoint', label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'provider', label: t('provider'), render: (row) => row.provider.title },
    { key: 'endpoints', label: t('endpoints'), render: (row) => <Endpoints endpoints={row.endpoints} /> },
  ],
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
  shown: ['title', 'provider', 'endpoints[0]', ...['url', 'transportProfile', 'transportProfile.certificateTypes', 'certificate', 'serviceDescription',
    'technicalContactUrl', 'serviceActivationDate', 'serviceExpirationDate'].map((name) => `endpoints[0].${name}`)],
  Fields: ({ current, error }) => {
    const t = useT();
    const providers = choices(useAll(accessPointProviders));
    const profiles = useAll(transportProfiles);
    const endpoint = current?.endpoints[0];
    const expiry = certificateExpiry(endpoint?.certificate);
    const { language } = useContext(I18n);
    const field = (name: string) => `endpoints[0].${name}`;
    return (
      <>
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Select label={t('provider')} name="provider" options={providers} initial={current?.provider.identifier} error={error('provider')} />
        <fieldset class="grid">
          <legend>{t('endpoint')}</legend>
          <Field label={t('url')} name={field('url')} type="url" placeholder="https://" defaultValue={endpoint?.url} error={firstError(error, field('url'), 'endpoints[0]')} />
          <Select label={t('transportProfile')} name={field('transportProfile')} error={error(field('transportProfile'))}
            initial={profiles.find((profile) => profile.value === endpoint?.transportProfile.value)?.identifier}
            options={profiles.map((profile) => [profile.identifier, `${profile.title} (${profile.value})`])} />
          <Field label={t('certificateTypes')} name={field('transportProfile.certificateTypes')} hint={t('commaSeparated')}
            defaultValue={endpoint?.transportProfile.certificateTypes.join(', ')} error={error(field('transportProfile.certificateTypes'))} />
          <Field label={t('certificate')} name={field('certificate')} multiline spellcheck={false} placeholder="-----BEGIN CERTIFICATE-----"
            hint={expiry ? t('certificateKept', { date: day(expiry.slice(0, 10), language) }) : t('certificateHint')} error={error(field('certificate'))} />
          <Field label={t('serviceDescription')} name={field('serviceDescription')} defaultValue={endpoint?.serviceDescription} error={error(field('serviceDescription'))} />
          <Field label={t('technicalContactUrl')} name={field('technicalContactUrl')} type="url" placeholder="https:// mailto:" defaultValue={endpoint?.technicalContactUrl} error={error(field('technicalContactUrl'))} />
          <Field label={t('serviceActivationDate')} name={field('serviceActivationDate')} type="datetime-local" step={1} defaultValue={isoToLocal(endpoint?.serviceActivationDate)} error={error(field('serviceActivationDate'))} />
          <Field label={t('serviceExpirationDate')} name={field('serviceExpirationDate')} type="datetime-local" step={1} defaultValue={isoToLocal(endpoint?.serviceExpirationDate)} error={error(field('serviceExpirationDate'))} />
          <Check label={t('requireBusinessLevelSignature')} name={field('requireBusinessLevelSignature')} defaultChecked={endpoint?.requireBusinessLevelSignature} />
        </fieldset>
      </>
    );
  },
});

const transportProfiles = resourceKind({
  path: '/rest/api/transport-profiles', name: 'transport-profile', title: 'transportProfiles', addTitle: 'addTransportProfile', label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'value', label: t('value'), render: (row) => <code class="id">{row.value}</code> },
    { key: 'restricted', label: t('restricted'), render: (row) => (row.restricted ? '✓' : '') },
  ],
  body: (form) => ({ value: text(form, 'value'), title: text(form, 'title'), restricted: new FormData(form).has('restricted') }),
  shown: ['value', 'title'],
  Fields: ({ current, error }) => {
    const t = useT();
    return (
      <>
        <Field label={t('value')} name="value" required defaultValue={current?.value} error={error('value')} />
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Check label={t('restricted')} name="restricted" defaultChecked={current?.restricted} />
      </>
    );
  },
});

const ROLES: Schemas['Role'][] = ['SERVICE_PROVIDER', 'ACCESS_POINT_PROVIDER', 'REGISTRY_AUTHORITY', 'ADMIN'];

const users = resourceKind({
  path: '/rest/api/users', name: 'user', title: 'users', addTitle: 'addUser', label: (row) => row.username,
  columns: (t) => [
    { key: 'username', label: t('username'), render: (row) => row.username },
    { key: 'role', label: t('role'), render: (row) => roleName(t, row.role as Schemas['Role']) },
    { key: 'provider', label: t('provider'), render: (row) => row.serviceProvider?.title ?? row.accessPointProvider?.title ?? '' },
  ],
  body: (form) => {
    const role = text(form, 'role') as Schemas['Role'];
    const provider = { identifier: text(form, 'provider') };
    return {
      username: text(form, 'username'), password: String(new FormData(form).get('password') ?? ''), role,
      ...(role === 'SERVICE_PROVIDER' ? { serviceProvider: provider } : {}),
      ...(role === 'ACCESS_POINT_PROVIDER' ? { accessPointProvider: provider } : {}),
    };
  },
  // Without a new password the user keeps the one it has.
  updateBody: ({ password, ...body }) => ({ ...body, ...(password ? { password } : {}) }),
  shown: ['username', 'password', 'role', 'serviceProvider', 'accessPointProvider'],
  Fields: ({ current, error }) => {
    const t = useT();
    const [role, setRole] = useState<Schemas['Role']>((current?.role as Schemas['Role'] | undefined) ?? 'SERVICE_PROVIDER');
    const serviceProviderOptions = choices(useAll(serviceProviders));
    const accessPointProviderOptions = choices(useAll(accessPointProviders));
    const providers = role === 'SERVICE_PROVIDER' ? serviceProviderOptions : role === 'ACCESS_POINT_PROVIDER' ? accessPointProviderOptions : undefined;
    return (
      <>
        <Field label={t('username')} name="username" autocomplete="off" required defaultValue={current?.username} error={error('username')} />
        <Field label={current ? t('newPassword') : t('password')} name="password" type="password" autocomplete="new-password" required={!current} minLength={12}
          hint={current ? t('passwordKept') : undefined} error={error('password')} />
        <Select label={t('role')} name="role" value={role} options={ROLES.map((value) => [value, roleName(t, value)])} onChange={(event) => setRole(event.currentTarget.value as Schemas['Role'])} error={error('role')} />
        {providers ? <Select label={t('provider')} name="provider" options={providers} initial={(current?.serviceProvider ?? current?.accessPointProvider)?.identifier}
          error={firstError(error, 'serviceProvider', 'accessPointProvider')} /> : null}
      </>
    );
  },
});

const identifiers = (rows: ReadonlyArray<{ identifier: string }> | undefined) => (rows ?? []).map(({ identifier }) => ({ identifier }));
const list = (value: string) => value.split(',').map((item) => item.trim()).filter(Boolean);

/** Processes: the fields an authority edits; links (document types, dependencies, capabilities) are kept as they are. */
const processes = resourceKind({
  path: '/rest/api/processes', name: 'process', title: 'processes', addTitle: 'addProcess', label: (row) => row.title, searchable: true, sort: ['title'], columns: processColumns,
  body: (form, current) => ({
    qualifiedIdentifier: text(form, 'qualifiedIdentifier'), title: text(form, 'title'), domain: text(form, 'domain'),
    ...(text(form, 'alias') ? { alias: text(form, 'alias') } : {}),
    restricted: new FormData(form).has('restricted'), visible: new FormData(form).has('visible'),
    requiredICDs: list(text(form, 'requiredICDs')) as Schemas['ICD'][],
    capabilities: identifiers(current?.capabilities), documentTypes: identifiers(current?.documentTypes), dependencies: identifiers(current?.dependencies),
  }),
  shown: ['qualifiedIdentifier', 'title', 'domain', 'alias', 'requiredICDs'],
  Fields: ({ current, error }) => {
    const t = useT();
    return (
      <>
        <Field label={t('identifier')} name="qualifiedIdentifier" required defaultValue={current?.qualifiedIdentifier} placeholder="cenbii-procid-ubl::urn:..." error={error('qualifiedIdentifier')} />
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Field label={t('domain')} name="domain" defaultValue={current?.domain} error={error('domain')} />
        <Field label={t('alias')} name="alias" defaultValue={current?.alias ?? ''} error={error('alias')} />
        <Field label={t('requiredIcds')} name="requiredICDs" hint={t('commaSeparated')} defaultValue={current?.requiredICDs.join(', ')} error={error('requiredICDs')} />
        <Check label={t('restricted')} name="restricted" defaultChecked={current?.restricted} />
        <Check label={t('visible')} name="visible" defaultChecked={current?.visible ?? true} />
      </>
    );
  },
});

const documentTypes = resourceKind({
  path: '/rest/api/document-types', name: 'document-type', title: 'documentTypes', addTitle: 'addDocumentType', label: (row) => row.title, sort: ['title'], columns: documentTypeColumns,
  body: (form, current) => ({
    qualifiedIdentifier: text(form, 'qualifiedIdentifier'), title: text(form, 'title'), visible: new FormData(form).has('visible'),
    processes: identifiers(current?.processes),
  }),
  shown: ['qualifiedIdentifier', 'title'],
  Fields: ({ current, error }) => {
    const t = useT();
    return (
      <>
        <Field label={t('identifier')} name="qualifiedIdentifier" required defaultValue={current?.qualifiedIdentifier} placeholder="busdox-docid-qns::urn:..." error={error('qualifiedIdentifier')} />
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Check label={t('visible')} name="visible" defaultChecked={current?.visible ?? true} />
      </>
    );
  },
});

export const ServiceProviders = () => <ResourcePage kind={serviceProviders} />;
export const AccessPointProviders = () => <ResourcePage kind={accessPointProviders} />;
export const AccessPoints = () => <ResourcePage kind={accessPoints} />;
export const TransportProfiles = () => <ResourcePage kind={transportProfiles} />;
/** The users, and the sign-in locks in force with a control to lift each. */
export const Users = () => <><ResourcePage kind={users} /><SignInLocks /></>;

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
