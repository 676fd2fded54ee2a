import { useContext, useState } from 'preact/hooks';
import { api, ok, page, type Schemas } from '../api/client.js';
import { when } from '../format.js';
import { DataTable, Field, FormProblem, Pager, useLoad, type Column } from '../components/ui.js';
import { I18n, useT, type TextKey, type Translate } from '../i18n.js';

export const processColumns = (t: Translate): Column<Schemas['Process']>[] => [
  { key: 'title', label: t('title'), render: (process) => process.title },
  {
    key: 'qualifiedIdentifier',
    label: t('identifier'),
    render: (process) => <code class="id">{process.qualifiedIdentifier}</code>,
  },
  {
    key: 'documentTypes',
    label: t('documentTypes'),
    render: (process) => process.documentTypes.map((type) => type.title).join(', '),
  },
  {
    key: 'rules',
    label: t('requiredIcds'),
    render: (process) =>
      [process.restricted ? t('restricted') : '', process.requiredICDs.join(', ')].filter(Boolean).join(' · '),
  },
];

export const documentTypeColumns = (t: Translate): Column<Schemas['DocumentType']>[] => [
  { key: 'title', label: t('title'), render: (type) => type.title },
  {
    key: 'qualifiedIdentifier',
    label: t('identifier'),
    render: (type) => <code class="id">{type.qualifiedIdentifier}</code>,
  },
  {
    key: 'processes',
    label: t('processes'),
    render: (type) => type.processes.map((process) => process.title).join(', '),
  },
];

export function Catalogue() {
  const t = useT();
  const [query, setQuery] = useState('');
  const [pageNumber, setPage] = useState(0);
  const [size, setSize] = useState(30);
  const processes = useLoad(
    () =>
      page(
        api.GET('/rest/api/processes', {
          params: { query: { query: query || undefined, page: pageNumber, size, sort: ['title'] } },
        }),
      ),
    [query, pageNumber, size],
  );
  const documentTypes = useLoad(
    () => page(api.GET('/rest/api/document-types', { params: { query: { size: 2000, sort: ['title'] } } })),
    [],
  );
  const needle = query.trim().toLowerCase();
  const matchingTypes = documentTypes.data?.content.filter((type) =>
    `${type.title} ${type.qualifiedIdentifier}`.toLowerCase().includes(needle),
  );

  return (
    <section>
      <h1>{t('catalogue')}</h1>
      <p>{t('catalogueIntro')}</p>
      <CodeListRelease />
      <form class="inline" role="search" onSubmit={(event) => event.preventDefault()}>
        <Field
          label={t('search')}
          name="query"
          type="search"
          value={query}
          onInput={(event) => {
            setQuery(event.currentTarget.value);
            setPage(0);
          }}
        />
      </form>
      <FormProblem problem={processes.problem ?? documentTypes.problem} />
      <h2>{t('processes')}</h2>
      <DataTable
        caption={t('processes')}
        columns={processColumns(t)}
        rows={processes.data?.content}
        loading={processes.loading}
        rowKey={(process) => process.identifier}
      />
      {processes.data ? (
        <Pager
          page={pageNumber}
          size={size}
          totalPages={processes.data.totalPages}
          totalElements={processes.data.totalElements}
          onPage={setPage}
          onSize={(value) => {
            setSize(value);
            setPage(0);
          }}
        />
      ) : null}
      <h2>{t('documentTypes')}</h2>
      <DataTable
        caption={t('documentTypes')}
        columns={documentTypeColumns(t)}
        rows={matchingTypes}
        loading={documentTypes.loading}
        rowKey={(type) => type.identifier}
      />
    </section>
  );
}

const LISTS: Record<Schemas['CatalogueSource']['list'], TextKey> = {
  processes: 'processes',
  'document-types': 'documentTypes',
  'transport-profiles': 'transportProfiles',
  'participant-identifier-schemes': 'identifierSchemesList',
  starter: 'starterList',
};

/** Which code-list release each list of the catalogue follows, and when it was loaded. */
export function CodeListRelease() {
  const t = useT();
  const { language } = useContext(I18n);
  const sources = useLoad(() => ok(api.GET('/rest/api/catalogue/sources')), []);
  return (
    <div class="card release" aria-busy={sources.loading}>
      <h2>{t('codeListRelease')}</h2>
      <FormProblem problem={sources.problem} />
      {sources.data?.length === 0 ? (
        <p>{t('codeListNone')}</p>
      ) : (
        <dl>
          {(sources.data ?? []).map((source) => (
            <div key={source.list}>
              <dt>{t(LISTS[source.list])}</dt>
              <dd>
                {source.version}{' '}
                <span class="hint">
                  ({t('loadedAt')} <time dateTime={source.loadedAt}>{when(source.loadedAt, language)}</time>)
                </span>
              </dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  );
}
