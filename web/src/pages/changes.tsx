import type { ComponentChildren } from 'preact';
import { useContext, useState } from 'preact/hooks';
import { api, ok, page, type Schemas } from '../api/client.js';
import { age, fieldChanges, localToIso, when } from '../format.js';
import { DataTable, Field, FormProblem, Pager, Select, useLoad, type Column } from '../components/ui.js';
import { I18n, useT, type TextKey, type Translate } from '../i18n.js';
import { subjectOf, summaryOf, whoOf } from '../audit.js';
import { NetworkErrorText, peerErrorWords, stateText, targetName } from './network.js';

type Entry = Schemas['ChangeEntry'];
type Resource = Schemas['ChangeResource'];
type Operation = Schemas['ChangeOperation'];

const RESOURCES: Record<Resource, TextKey> = {
  participant: 'resourceParticipant',
  process: 'resourceProcess',
  'document-type': 'resourceDocumentType',
  'access-point': 'accessPoint',
  'access-point-provider': 'resourceAccessPointProvider',
  'service-provider': 'resourceServiceProvider',
  'transport-profile': 'transportProfile',
  capability: 'resourceCapability',
  user: 'resourceUser',
  'sign-in-lock': 'resourceSignInLock',
  'register-flag': 'resourceRegisterFlag',
  'identifier-scheme': 'resourceIdentifierScheme',
  'removal-notice': 'resourceRemovalNotice',
};
const OPERATIONS: Record<Operation, TextKey> = {
  create: 'operationCreate',
  update: 'operationUpdate',
  delete: 'operationDelete',
  transfer: 'operationTransfer',
  expire: 'operationExpire',
  migrate: 'operationMigrate',
  withdraw: 'operationWithdraw',
};

interface Filters {
  resource?: Resource;
  identifier?: string;
  operation?: Operation;
  user?: string;
  provider?: string;
  from?: string;
  to?: string;
}

/** The form's filters as the API takes them: empty fields left out, local times as UTC date-times. */
function filtersOf(form: HTMLFormElement): Filters {
  const data = new FormData(form);
  const value = (name: string) => String(data.get(name) ?? '').trim() || undefined;
  return {
    resource: value('resource') as Resource | undefined,
    identifier: value('identifier'),
    operation: value('operation') as Operation | undefined,
    user: value('user'),
    provider: value('provider'),
    from: localToIso(value('from') ?? ''),
    to: localToIso(value('to') ?? ''),
  };
}

/**
 * The audit trail, newest first, filtered server-side. The authority sees every change; a service provider the
 * history of its own participants (the API's scope), so it gets neither the resource nor the provider filter.
 */
export function Audit({ authority }: { authority: boolean }) {
  const t = useT();
  const { language } = useContext(I18n);
  const [filters, setFilters] = useState<Filters>({});
  const [pageNumber, setPage] = useState(0);
  const [size, setSize] = useState(30);
  const providers = useLoad(
    () =>
      authority
        ? page(api.GET('/rest/api/service-providers', { params: { query: { size: 2000, sort: ['title'] } } }))
        : Promise.resolve(undefined),
    [authority],
  );
  const list = useLoad(
    () => page(api.GET('/rest/api/audit', { params: { query: { ...filters, page: pageNumber, size } } })),
    [JSON.stringify(filters), pageNumber, size],
  );
  const any: Array<[string, string]> = [['', t('any')]];
  const columns: Column<Entry>[] = [
    {
      key: 'changedAt',
      label: t('changedAt'),
      render: (entry) => <time dateTime={entry.changedAt}>{when(entry.changedAt, language)}</time>,
    },
    { key: 'resource', label: t('resource'), render: (entry) => t(RESOURCES[entry.resource]) },
    { key: 'operation', label: t('operation'), render: (entry) => operationOf(entry, t) },
    { key: 'identifier', label: t('identifier'), render: (entry) => <Subject entry={entry} /> },
    { key: 'user', label: t('user'), render: (entry) => whoOf(entry, t) },
    { key: 'changes', label: t('changes'), render: (entry) => <ChangeDetails entry={entry} /> },
  ];
  const apply = (event: Event) => {
    event.preventDefault();
    setFilters(filtersOf(event.currentTarget as HTMLFormElement));
    setPage(0);
  };
  return (
    <section>
      <h1>{t('audit')}</h1>
      <p>{authority ? t('auditIntro') : t('auditIntroProvider')}</p>
      <form
        class="card filters"
        role="search"
        aria-label={t('audit')}
        onSubmit={apply}
        onReset={() => {
          setFilters({});
          setPage(0);
        }}
      >
        <div class="filter-grid">
          {authority ? (
            <Select
              label={t('resource')}
              name="resource"
              options={[
                ...any,
                ...Object.entries(RESOURCES).map(([value, key]) => [value, t(key)] as [string, string]),
              ]}
            />
          ) : null}
          <Field label={t('identifier')} name="identifier" error={list.problem?.fields.identifier} />
          <Select
            label={t('operation')}
            name="operation"
            options={[...any, ...Object.entries(OPERATIONS).map(([value, key]) => [value, t(key)] as [string, string])]}
          />
          <Field label={t('user')} name="user" autocomplete="off" error={list.problem?.fields.user} />
          {authority ? (
            <Select
              label={t('provider')}
              name="provider"
              options={[
                ...any,
                ...(providers.data?.content ?? []).map(
                  (provider) => [provider.identifier, provider.title] as [string, string],
                ),
              ]}
            />
          ) : null}
          <Field label={t('from')} name="from" type="datetime-local" step={1} error={list.problem?.fields.from} />
          <Field label={t('to')} name="to" type="datetime-local" step={1} error={list.problem?.fields.to} />
        </div>
        <div class="buttons">
          <button type="submit" class="primary">
            {t('filter')}
          </button>
          <button type="reset">{t('clearFilters')}</button>
        </div>
      </form>
      <FormProblem problem={list.problem} shown={['identifier', 'user', 'from', 'to']} />
      <DataTable
        caption={t('audit')}
        columns={columns}
        rows={list.data?.content}
        loading={list.loading}
        rowKey={(entry, index) => String(entry.seq ?? index)}
        placeholderRows={Math.min(size, 10)}
      />
      <Pager
        page={pageNumber}
        size={size}
        totalPages={list.data?.totalPages}
        totalElements={list.data?.totalElements}
        onPage={setPage}
        onSize={(value) => {
          setSize(value);
          setPage(0);
        }}
      />
    </section>
  );
}

/** Lifting is the one thing done to a sign-in lock that the log keeps: its delete says so. */
const operationOf = (entry: Entry, t: Translate) =>
  t(entry.resource === 'sign-in-lock' && entry.operation === 'delete' ? 'operationLift' : OPERATIONS[entry.operation]);

/** An identifier under the words it stands for (when there are any). */
function Named({ names, identifier }: { names: Array<string | null | undefined>; identifier: string }) {
  const words = names.filter(Boolean).join(' · ');
  return (
    <>
      {words ? <strong class="subject">{words}</strong> : null} <code class="id">{identifier}</code>
    </>
  );
}

const Subject = ({ entry }: { entry: Entry }) => (
  <Named names={[subjectOf(entry, useT())]} identifier={entry.identifier} />
);

/** What changed in words, then before and after of every field, folded: one click away. */
function ChangeDetails({ entry }: { entry: Entry }) {
  const t = useT();
  const changes = fieldChanges(entry.before, entry.after);
  if (changes.length === 0) return <span>{t('noFieldChanged')}</span>;
  const summary = summaryOf(entry, t);
  return (
    <>
      {summary.length > 0 ? (
        <ul class="summary">
          {summary.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      ) : null}
      <details class="diff">
        <summary>{t('fieldsChanged', { count: changes.length })}</summary>
        <ul>
          {changes.map((change) => (
            <li key={change.path}>
              <code>{change.path}</code>:{' '}
              {change.before === undefined ? null : (
                <del>
                  <span class="visually-hidden">{t('before')} </span>
                  {change.before}
                </del>
              )}
              {change.before !== undefined && change.after !== undefined ? <span aria-hidden="true"> → </span> : null}
              {change.after === undefined ? null : (
                <ins>
                  <span class="visually-hidden">{t('after')} </span>
                  {change.after}
                </ins>
              )}
            </li>
          ))}
        </ul>
      </details>
    </>
  );
}

type Delivery = Schemas['DeliveryStatus'];

/** The columns of a delivery's state: every field the API answers of it (the deliveries page and the status page). */
export function useDeliveryColumns(): Column<Delivery>[] {
  const t = useT();
  const { language } = useContext(I18n);
  return [
    { key: 'target', label: t('target'), render: (delivery) => targetName(t, delivery.target) },
    { key: 'pending', label: t('pending'), render: (delivery) => delivery.pending },
    {
      key: 'setAside',
      label: t('setAside'),
      render: (delivery) => <span class={delivery.setAside > 0 ? 'failed' : undefined}>{delivery.setAside}</span>,
    },
    {
      key: 'oldestPendingSeconds',
      label: t('oldestPending'),
      render: (delivery) => (delivery.pending + delivery.setAside > 0 ? age(delivery.oldestPendingSeconds) : '–'),
    },
    {
      key: 'attempts',
      label: t('failedAttempts'),
      render: (delivery) => <span class={delivery.attempts > 0 ? 'failed' : undefined}>{delivery.attempts}</span>,
    },
    {
      key: 'lastError',
      label: t('lastError'),
      render: (delivery) =>
        delivery.lastError ? (
          <span>
            {delivery.lastErrorAt ? (
              <>
                <time dateTime={delivery.lastErrorAt}>{when(delivery.lastErrorAt, language)}</time>:{' '}
              </>
            ) : null}
            <span class="failed">{peerErrorWords(t, delivery.lastError)}</span>
          </span>
        ) : (
          t('noError')
        ),
    },
  ];
}

/** Delivery to the SML and the Directory: what waits, for how long, and the last failure. */
export function Deliveries() {
  const columns = useDeliveryColumns();
  return (
    <StatusTable
      level="h1"
      title="deliveries"
      intro="deliveriesIntro"
      empty="noDeliveries"
      load={() => ok(api.GET('/rest/api/deliveries'))}
      columns={columns}
      rowKey={(delivery) => delivery.target}
      placeholderRows={2}
    >
      {(deliveries) => <StuckParticipants configured={deliveries === undefined || deliveries.length > 0} />}
    </StatusTable>
  );
}

type Stuck = Schemas['StuckParticipant'];

/** The participants held up on their way to the SML, per state, oldest first; with no target `configured`, none can be. */
function StuckParticipants({ configured }: { configured: boolean }) {
  const t = useT();
  const { language } = useContext(I18n);
  const columns: Column<Stuck>[] = [
    {
      key: 'participant',
      label: t('participant'),
      render: (row) => <Named names={row.servedBy.map((served) => served.name)} identifier={row.participant} />,
    },
    {
      key: 'servedBy',
      label: t('servedBy'),
      render: (row) => row.servedBy.map((served) => served.serviceProvider.title).join(', '),
    },
    { key: 'target', label: t('target'), render: (row) => t(row.target) },
    {
      key: 'state',
      label: t('state'),
      render: (row) => <span class={row.state === 'pending' ? undefined : 'failed'}>{t(stateText(row.state))}</span>,
    },
    {
      key: 'since',
      label: t('stateSince'),
      render: (row) => <time dateTime={row.since}>{when(row.since, language)}</time>,
    },
    {
      key: 'lastError',
      label: t('lastError'),
      render: (row) => (row.lastError ? <NetworkErrorText error={row.lastError} /> : '–'),
    },
  ];
  return (
    <StatusTable
      level="h2"
      title="stuckParticipants"
      intro="stuckIntro"
      empty={configured ? 'noStuck' : 'noStuckUnconfigured'}
      load={() => ok(api.GET('/rest/api/deliveries/participants'))}
      columns={columns}
      rowKey={(row) => `${row.target} ${row.state} ${row.participant}`}
      placeholderRows={3}
    />
  );
}

/** A heading with a refresh button over a table of what `load` answers (a status, read again on demand). */
function StatusTable<T>(props: {
  level: 'h1' | 'h2';
  title: TextKey;
  intro: TextKey;
  empty: TextKey;
  load: () => Promise<T[]>;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  placeholderRows: number;
  children?: (rows: T[] | undefined) => ComponentChildren;
}) {
  const t = useT();
  const status = useLoad(props.load, []);
  const Heading = props.level;
  return (
    <section>
      <div class="heading">
        <Heading>{t(props.title)}</Heading>
        <button type="button" onClick={status.reload} disabled={status.loading}>
          {t('refresh')}
        </button>
      </div>
      <p>{t(props.intro)}</p>
      <FormProblem problem={status.problem} />
      <DataTable
        caption={t(props.title)}
        columns={props.columns}
        rows={status.data}
        loading={status.loading}
        rowKey={props.rowKey}
        placeholderRows={props.placeholderRows}
      />
      {status.data?.length === 0 ? <p class="status">{t(props.empty)}</p> : null}
      {props.children?.(status.data)}
    </section>
  );
}
