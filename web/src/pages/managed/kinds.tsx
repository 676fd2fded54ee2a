import { useContext, useRef, useState } from 'preact/hooks';
import type { Schemas } from '../../api/client.js';
import { certificateExpiry, expiryOf } from '../../certificates.js';
import { LinkPicker, useFormReset } from '../../components/link-picker.js';
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
const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
/** The entries a form's link picker chose (LinkPicker): each by its identifier. */
const linked = (form: HTMLFormElement, name: string) =>
  new FormData(form).getAll(name).map((identifier) => ({ identifier: String(identifier) }));
const choices = (rows: ReadonlyArray<{ identifier: string; title: string }>) =>
  rows.map((row): [string, string] => [row.identifier, row.title]);

const serviceProviders = resourceKind({
  path: '/rest/api/service-providers',
  name: 'service-provider',
  title: 'serviceProviders',
  addTitle: 'addServiceProvider',
  label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'accessPoint', label: t('accessPoint'), render: (row) => row.accessPoint?.title ?? '' },
    // The command line names a provider by it: `registry import-participants --service-provider <identifier>`.
    {
      key: 'identifier',
      label: t('providerIdentifier'),
      render: (row) => (
        <code class="id" title={t('providerIdentifierHint')}>
          {row.identifier}
        </code>
      ),
    },
  ],
  body: (form) => ({ title: text(form, 'title'), accessPoint: { identifier: text(form, 'accessPoint') } }),
  shown: ['title', 'accessPoint'],
  Fields: ({ current, error }) => {
    const t = useT();
    const accessPointChoices = choices(useAll(accessPoints));
    return (
      <>
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Select
          label={t('accessPoint')}
          name="accessPoint"
          options={accessPointChoices}
          initial={current?.accessPoint?.identifier}
          error={error('accessPoint')}
        />
      </>
    );
  },
});

const accessPointProviders = resourceKind({
  path: '/rest/api/access-point-providers',
  name: 'access-point-provider',
  title: 'accessPointProviders',
  addTitle: 'addAccessPointProvider',
  label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    {
      key: 'contact',
      label: t('contact'),
      render: (row) => [row.contact?.name, row.contact?.email].filter(Boolean).join(', '),
    },
  ],
  body: (form) => ({
    title: text(form, 'title'),
    contact: contactForm({
      name: text(form, 'contact.name'),
      email: text(form, 'contact.email'),
      phoneNumber: text(form, 'contact.phoneNumber'),
    }),
  }),
  shown: ['title', 'contact', 'contact.name', 'contact.email', 'contact.phoneNumber'],
  Fields: ({ current, error }) => {
    const t = useT();
    return (
      <>
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Field
          label={t('contactName')}
          name="contact.name"
          required
          defaultValue={current?.contact?.name}
          error={firstError(error, 'contact.name', 'contact')}
        />
        <Field
          label={t('email')}
          name="contact.email"
          type="email"
          defaultValue={current?.contact?.email ?? ''}
          error={error('contact.email')}
        />
        <Field
          label={t('phone')}
          name="contact.phoneNumber"
          type="tel"
          defaultValue={current?.contact?.phoneNumber ?? ''}
          error={error('contact.phoneNumber')}
        />
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
            {endpoint.transportProfile.certificateTypes.length > 0 ? (
              <>
                {' '}
                · {t('certificateTypes')}: {endpoint.transportProfile.certificateTypes.join(', ')}
              </>
            ) : null}
            {' · '}
            {expiry ? (
              <span class={`expiry ${state}`}>
                {t('certificateExpires')} {day(expiry.slice(0, 10), language)}
                {state === 'expired'
                  ? ` (${t('expired')})`
                  : state === 'expiring'
                    ? ` (${t('expiresInDays', { days: daysLeft })})`
                    : ''}
              </span>
            ) : (
              <span class="hint">{t('noCertificate')}</span>
            )}
            {endpoint.requireBusinessLevelSignature ? <> · {t('requireBusinessLevelSignature')}</> : null}
          </li>
        );
      })}
    </ul>
  );
}

/** The most endpoints the form offers: one per transport profile and a few more, as the API takes any number. */
const MAX_ENDPOINTS = 8;
const ENDPOINT_FIELDS = [
  'url',
  'transportProfile',
  'transportProfile.certificateTypes',
  'certificate',
  'serviceDescription',
  'technicalContactUrl',
  'serviceActivationDate',
  'serviceExpirationDate',
];
const endpointField = (index: number, name: string) => `endpoints[${index}].${name}`;

/**
 * The endpoints of the form, in the order shown: each fieldset carries `endpoint`, the index of the endpoint it edits
 * among the access point's (empty for a new one), so that one left without a new certificate keeps its own.
 */
function endpointsOf(form: HTMLFormElement, current: Endpoint[]): Schemas['EndpointForm'][] {
  return new FormData(form).getAll('endpoint').map((kept, index) => {
    const field = (name: string) => text(form, endpointField(index, name));
    return {
      url: field('url'),
      transportProfile: {
        identifier: field('transportProfile'),
        certificateTypes: list(field('transportProfile.certificateTypes')),
      },
      // Left empty while editing: the endpoint keeps the certificate it has.
      certificate: optional(field('certificate')) ?? (kept === '' ? undefined : current[Number(kept)]?.certificate),
      serviceDescription: optional(field('serviceDescription')),
      technicalContactUrl: optional(field('technicalContactUrl')),
      serviceActivationDate: localToIso(field('serviceActivationDate')),
      serviceExpirationDate: localToIso(field('serviceExpirationDate')),
      requireBusinessLevelSignature: new FormData(form).has(endpointField(index, 'requireBusinessLevelSignature')),
    };
  });
}

/** One endpoint's fields, named by its place in the form (the API's messages name it so). */
function EndpointFields({
  index,
  endpoint,
  kept,
  error,
  onRemove,
}: {
  index: number;
  endpoint: Endpoint | undefined;
  kept: number | undefined;
  error: (field: string) => string | undefined;
  onRemove: () => void;
}) {
  const t = useT();
  const profiles = useAll(transportProfiles);
  const expiry = certificateExpiry(endpoint?.certificate);
  const { language } = useContext(I18n);
  const field = (name: string) => endpointField(index, name);
  return (
    <fieldset class="grid">
      <legend>{t('endpointNumber', { number: index + 1 })}</legend>
      <input type="hidden" name="endpoint" value={kept === undefined ? '' : String(kept)} />
      <Field
        label={t('url')}
        name={field('url')}
        type="url"
        placeholder="https://"
        defaultValue={endpoint?.url}
        error={firstError(error, field('url'), `endpoints[${index}]`)}
      />
      <Select
        label={t('transportProfile')}
        name={field('transportProfile')}
        error={error(field('transportProfile'))}
        initial={profiles.find((profile) => profile.value === endpoint?.transportProfile.value)?.identifier}
        options={profiles.map((profile) => [profile.identifier, `${profile.title} (${profile.value})`])}
      />
      <Field
        label={t('certificateTypes')}
        name={field('transportProfile.certificateTypes')}
        hint={t('commaSeparated')}
        defaultValue={endpoint?.transportProfile.certificateTypes.join(', ')}
        error={error(field('transportProfile.certificateTypes'))}
      />
      <Field
        label={t('certificate')}
        name={field('certificate')}
        multiline
        spellcheck={false}
        placeholder="-----BEGIN CERTIFICATE-----"
        hint={expiry ? t('certificateKept', { date: day(expiry.slice(0, 10), language) }) : t('certificateHint')}
        error={error(field('certificate'))}
      />
      <Field
        label={t('serviceDescription')}
        name={field('serviceDescription')}
        defaultValue={endpoint?.serviceDescription}
        error={error(field('serviceDescription'))}
      />
      <Field
        label={t('technicalContactUrl')}
        name={field('technicalContactUrl')}
        type="url"
        placeholder="https:// mailto:"
        defaultValue={endpoint?.technicalContactUrl}
        error={error(field('technicalContactUrl'))}
      />
      <Field
        label={t('serviceActivationDate')}
        name={field('serviceActivationDate')}
        type="datetime-local"
        step={1}
        defaultValue={isoToLocal(endpoint?.serviceActivationDate)}
        error={error(field('serviceActivationDate'))}
      />
      <Field
        label={t('serviceExpirationDate')}
        name={field('serviceExpirationDate')}
        type="datetime-local"
        step={1}
        defaultValue={isoToLocal(endpoint?.serviceExpirationDate)}
        error={error(field('serviceExpirationDate'))}
      />
      <Check
        label={t('requireBusinessLevelSignature')}
        name={field('requireBusinessLevelSignature')}
        defaultChecked={endpoint?.requireBusinessLevelSignature}
      />
      <div class="buttons">
        <button type="button" class="danger" onClick={onRemove}>
          {t('removeEndpoint', { number: index + 1 })}
        </button>
      </div>
    </fieldset>
  );
}

/** The access point's endpoints, each in its fieldset, with a button to add one more and one to remove each. */
function EndpointList({ current, error }: { current: Endpoint[]; error: (field: string) => string | undefined }) {
  const t = useT();
  const root = useRef<HTMLDivElement>(null);
  // Each fieldset by a key of its own (its DOM keeps what was typed as others go); `kept`: the endpoint it edits.
  const initial = () =>
    current.length > 0 ? current.map((_, kept) => ({ key: kept, kept })) : [{ key: 0, kept: undefined }];
  const [rows, setRows] = useState<Array<{ key: number; kept: number | undefined }>>(initial);
  const [nextKey, setNextKey] = useState(current.length + 1);
  useFormReset(root, () => setRows(initial()));
  return (
    <div ref={root}>
      {rows.map((row, index) => (
        <EndpointFields
          key={row.key}
          index={index}
          kept={row.kept}
          endpoint={row.kept === undefined ? undefined : current[row.kept]}
          error={error}
          onRemove={() => setRows(rows.filter((other) => other.key !== row.key))}
        />
      ))}
      {rows.length === 0 ? <p class="hint">{t('noEndpoints')}</p> : null}
      {rows.length < MAX_ENDPOINTS ? (
        <div class="buttons">
          <button
            type="button"
            onClick={() => {
              setRows([...rows, { key: nextKey, kept: undefined }]);
              setNextKey(nextKey + 1);
            }}
          >
            {t('addEndpoint')}
          </button>
        </div>
      ) : null}
    </div>
  );
}

const accessPoints = resourceKind({
  path: '/rest/api/accessPoints',
  name: 'access-point',
  title: 'accessPoints',
  addTitle: 'addAccessPoint',
  label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'provider', label: t('provider'), render: (row) => row.provider.title },
    { key: 'endpoints', label: t('endpoints'), render: (row) => <Endpoints endpoints={row.endpoints} /> },
  ],
  body: (form, current) => ({
    title: text(form, 'title'),
    provider: { identifier: text(form, 'provider') },
    endpoints: endpointsOf(form, current?.endpoints ?? []),
  }),
  shown: [
    'title',
    'provider',
    ...Array.from({ length: MAX_ENDPOINTS }, (_, index) => [
      `endpoints[${index}]`,
      ...ENDPOINT_FIELDS.map((name) => endpointField(index, name)),
    ]).flat(),
  ],
  Fields: ({ current, error }) => {
    const t = useT();
    const providers = choices(useAll(accessPointProviders));
    return (
      <>
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Select
          label={t('provider')}
          name="provider"
          options={providers}
          initial={current?.provider.identifier}
          error={error('provider')}
        />
        <EndpointList current={current?.endpoints ?? []} error={error} />
      </>
    );
  },
});

const transportProfiles = resourceKind({
  path: '/rest/api/transport-profiles',
  name: 'transport-profile',
  title: 'transportProfiles',
  addTitle: 'addTransportProfile',
  label: (row) => row.title,
  columns: (t) => [
    { key: 'title', label: t('title'), render: (row) => row.title },
    { key: 'value', label: t('value'), render: (row) => <code class="id">{row.value}</code> },
    { key: 'restricted', label: t('restricted'), render: (row) => (row.restricted ? '✓' : '') },
  ],
  body: (form) => ({
    value: text(form, 'value'),
    title: text(form, 'title'),
    restricted: new FormData(form).has('restricted'),
  }),
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
  path: '/rest/api/users',
  name: 'user',
  title: 'users',
  addTitle: 'addUser',
  label: (row) => row.username,
  columns: (t) => [
    { key: 'username', label: t('username'), render: (row) => row.username },
    { key: 'role', label: t('role'), render: (row) => roleName(t, row.role as Schemas['Role']) },
    {
      key: 'provider',
      label: t('provider'),
      render: (row) => row.serviceProvider?.title ?? row.accessPointProvider?.title ?? '',
    },
  ],
  body: (form) => {
    const role = text(form, 'role') as Schemas['Role'];
    const provider = { identifier: text(form, 'provider') };
    return {
      username: text(form, 'username'),
      password: String(new FormData(form).get('password') ?? ''),
      role,
      ...(role === 'SERVICE_PROVIDER' ? { serviceProvider: provider } : {}),
      ...(role === 'ACCESS_POINT_PROVIDER' ? { accessPointProvider: provider } : {}),
    };
  },
  // Without a new password the user keeps the one it has.
  updateBody: ({ password, ...body }) => ({ ...body, ...(password ? { password } : {}) }),
  shown: ['username', 'password', 'role', 'serviceProvider', 'accessPointProvider'],
  Fields: ({ current, error }) => {
    const t = useT();
    const [role, setRole] = useState<Schemas['Role']>(
      (current?.role as Schemas['Role'] | undefined) ?? 'SERVICE_PROVIDER',
    );
    const serviceProviderOptions = choices(useAll(serviceProviders));
    const accessPointProviderOptions = choices(useAll(accessPointProviders));
    const providers =
      role === 'SERVICE_PROVIDER'
        ? serviceProviderOptions
        : role === 'ACCESS_POINT_PROVIDER'
          ? accessPointProviderOptions
          : undefined;
    return (
      <>
        <Field
          label={t('username')}
          name="username"
          autocomplete="off"
          required
          defaultValue={current?.username}
          error={error('username')}
        />
        <Field
          label={current ? t('newPassword') : t('password')}
          name="password"
          type="password"
          autocomplete="new-password"
          required={!current}
          minLength={12}
          hint={current ? t('passwordKept') : undefined}
          error={error('password')}
        />
        <Select
          label={t('role')}
          name="role"
          value={role}
          options={ROLES.map((value) => [value, roleName(t, value)])}
          onChange={(event) => setRole(event.currentTarget.value as Schemas['Role'])}
          error={error('role')}
        />
        {providers ? (
          <Select
            label={t('provider')}
            name="provider"
            options={providers}
            initial={(current?.serviceProvider ?? current?.accessPointProvider)?.identifier}
            error={firstError(error, 'serviceProvider', 'accessPointProvider')}
          />
        ) : null}
      </>
    );
  },
});

const capabilities = resourceKind({
  path: '/rest/api/capabilities',
  name: 'capability',
  title: 'capabilities',
  addTitle: 'addCapability',
  label: (row) => row.title,
  sort: ['title'],
  columns: (t) => [{ key: 'title', label: t('title'), render: (row) => row.title }],
  body: (form) => ({ title: text(form, 'title') }),
  shown: ['title'],
  Fields: ({ current, error }) => {
    const t = useT();
    return <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />;
  },
});

/** Processes: every field the API takes, their links (document types, dependencies, capabilities) chosen by name. */
const processes = resourceKind({
  path: '/rest/api/processes',
  name: 'process',
  title: 'processes',
  addTitle: 'addProcess',
  label: (row) => row.title,
  searchable: true,
  sort: ['title'],
  columns: processColumns,
  body: (form) => ({
    qualifiedIdentifier: text(form, 'qualifiedIdentifier'),
    title: text(form, 'title'),
    domain: text(form, 'domain'),
    ...(text(form, 'alias') ? { alias: text(form, 'alias') } : {}),
    restricted: new FormData(form).has('restricted'),
    visible: new FormData(form).has('visible'),
    requiredICDs: list(text(form, 'requiredICDs')) as Schemas['ICD'][],
    capabilities: linked(form, 'capabilities'),
    documentTypes: linked(form, 'documentTypes'),
    dependencies: linked(form, 'dependencies'),
  }),
  shown: [
    'qualifiedIdentifier',
    'title',
    'domain',
    'alias',
    'requiredICDs',
    'capabilities',
    'documentTypes',
    'dependencies',
  ],
  Fields: ({ current, error }) => {
    const t = useT();
    const allDocumentTypes = useAll(documentTypes);
    const otherProcesses = useAll(processes).filter((process) => process.identifier !== current?.identifier);
    const allCapabilities = useAll(capabilities);
    return (
      <>
        <Field
          label={t('identifier')}
          name="qualifiedIdentifier"
          required
          defaultValue={current?.qualifiedIdentifier}
          placeholder="cenbii-procid-ubl::urn:..."
          error={error('qualifiedIdentifier')}
        />
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Field label={t('domain')} name="domain" defaultValue={current?.domain} error={error('domain')} />
        <Field label={t('alias')} name="alias" defaultValue={current?.alias ?? ''} error={error('alias')} />
        <Field
          label={t('requiredIcds')}
          name="requiredICDs"
          hint={t('commaSeparated')}
          defaultValue={current?.requiredICDs.join(', ')}
          error={error('requiredICDs')}
        />
        <Check label={t('restricted')} name="restricted" defaultChecked={current?.restricted} />
        <Check label={t('visible')} name="visible" defaultChecked={current?.visible ?? true} />
        <LinkPicker
          name="documentTypes"
          legend={t('documentTypes')}
          what={t('documentTypes').toLowerCase()}
          options={allDocumentTypes}
          initial={current?.documentTypes ?? []}
          error={error('documentTypes')}
        />
        <LinkPicker
          name="dependencies"
          legend={t('dependsOn')}
          what={t('processes').toLowerCase()}
          options={otherProcesses}
          initial={current?.dependencies ?? []}
          error={error('dependencies')}
        />
        <LinkPicker
          name="capabilities"
          legend={t('capabilities')}
          what={t('capabilities').toLowerCase()}
          options={allCapabilities}
          initial={current?.capabilities ?? []}
          error={error('capabilities')}
        />
      </>
    );
  },
});

const documentTypes = resourceKind({
  path: '/rest/api/document-types',
  name: 'document-type',
  title: 'documentTypes',
  addTitle: 'addDocumentType',
  label: (row) => row.title,
  sort: ['title'],
  columns: documentTypeColumns,
  body: (form) => ({
    qualifiedIdentifier: text(form, 'qualifiedIdentifier'),
    title: text(form, 'title'),
    visible: new FormData(form).has('visible'),
    processes: linked(form, 'processes'),
  }),
  shown: ['qualifiedIdentifier', 'title', 'processes'],
  Fields: ({ current, error }) => {
    const t = useT();
    const allProcesses = useAll(processes);
    return (
      <>
        <Field
          label={t('identifier')}
          name="qualifiedIdentifier"
          required
          defaultValue={current?.qualifiedIdentifier}
          placeholder="busdox-docid-qns::urn:..."
          error={error('qualifiedIdentifier')}
        />
        <Field label={t('title')} name="title" required defaultValue={current?.title} error={error('title')} />
        <Check label={t('visible')} name="visible" defaultChecked={current?.visible ?? true} />
        <LinkPicker
          name="processes"
          legend={t('processes')}
          what={t('processes').toLowerCase()}
          options={allProcesses}
          initial={current?.processes ?? []}
          error={error('processes')}
        />
      </>
    );
  },
});

export const ServiceProviders = () => <ResourcePage kind={serviceProviders} />;
export const AccessPointProviders = () => <ResourcePage kind={accessPointProviders} />;
export const AccessPoints = () => <ResourcePage kind={accessPoints} />;
export const TransportProfiles = () => <ResourcePage kind={transportProfiles} />;
/** The users, and the sign-in locks in force with a control to lift each. */
export const Users = () => (
  <>
    <ResourcePage kind={users} />
    <SignInLocks />
  </>
);

/** The catalogue as the authority keeps it: the code-list release, then processes and document types, each editable. */
export function CatalogueAdmin() {
  const t = useT();
  return (
    <section>
      <h1>{t('catalogue')}</h1>
      <CodeListRelease />
      <ResourcePage kind={processes} nested />
      <ResourcePage kind={documentTypes} nested />
      <ResourcePage kind={capabilities} nested />
    </section>
  );
}
