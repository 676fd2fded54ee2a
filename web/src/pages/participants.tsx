import { useContext, useState } from 'preact/hooks';
import { api, ok, page, type Problem, type Schemas } from '../api/client.js';
import {
  Confirm,
  DataTable,
  Field,
  FormProblem,
  Pager,
  problemFrom,
  Select,
  Status,
  useAction,
  useLoad,
  type Column,
  type Sort,
} from '../components/ui.js';
import { takeFlash } from '../flash.js';
import { I18n, useT, type Translate } from '../i18n.js';
import { day } from '../format.js';
import { exportLine } from '../jsonl.js';
import { href } from '../router.js';
import { ParticipantAttentionCard } from './attention.js';
import { MlsReceiverCard } from './mls-receiver.js';

type Participant = Schemas['Participant'];

/** A participant's provider as the command line needs it: its title, and the identifier `--service-provider` takes. */
export function ProviderCell({ provider }: { provider: { identifier: string; title: string } }) {
  return (
    <>
      {provider.title}
      <br />
      <code class="id">{provider.identifier}</code>
    </>
  );
}

const participantLabel = (participant: Participant) => participant.name ?? participant.organizationIdentifier;

/**
 * A service provider's participants, with their actions and the export; with `authority`, every provider's
 * participants to search and read (the API lets ADMIN and REGISTRY_AUTHORITY read them all; changing them is the providers').
 */
export function Participants({ authority = false }: { authority?: boolean }) {
  const t = useT();
  const { language } = useContext(I18n);
  const [query, setQuery] = useState('');
  const [icd, setIcd] = useState('');
  const [pageNumber, setPage] = useState(0);
  const [size, setSize] = useState(30);
  const [sort, setSort] = useState<Sort>({ property: 'name', direction: 'ASC' });
  const [deleting, setDeleting] = useState<Participant | null>(null);
  const [transferring, setTransferring] = useState<Participant | null>(null);
  const [notice, setNotice] = useState(takeFlash);
  const list = useLoad(
    () =>
      page(
        api.GET('/rest/api/participants', {
          params: {
            query: {
              query: query.trim() || undefined,
              icd: (icd || undefined) as Schemas['ICD'] | undefined,
              page: pageNumber,
              size,
              sort: [`${sort.property},${sort.direction}`],
            },
          },
        }),
      ),
    [query, icd, pageNumber, size, sort.property, sort.direction],
  );

  const columns: Column<Participant>[] = [
    ...participantColumns(t, language),
    ...(authority
      ? [
          {
            key: 'provider',
            label: t('provider'),
            render: (participant: Participant) => <ProviderCell provider={participant.provider} />,
          },
        ]
      : []),
  ];
  if (!authority)
    columns.push({
      key: 'actions',
      label: t('actions'),
      render: (participant) => (
        <div class="row-actions">
          <a
            class="button"
            href={href('participants', 'edit', participant.identifier)}
            aria-label={`${t('edit')} ${participantLabel(participant)}`}
          >
            {t('edit')}
          </a>
          <button
            type="button"
            onClick={() => {
              setNotice('');
              setTransferring(participant);
            }}
            aria-label={`${t('transfer')} ${participantLabel(participant)}`}
          >
            {t('transfer')}
          </button>
          <button
            type="button"
            class="danger"
            onClick={() => {
              setNotice('');
              setDeleting(participant);
            }}
            aria-label={`${t('delete')} ${participantLabel(participant)}`}
          >
            {t('delete')}
          </button>
        </div>
      ),
    });
  const done = (text: string) => {
    setNotice(text);
    list.reload();
  };
  const searched = (apply: () => void) => {
    apply();
    setPage(0);
    setNotice('');
  };

  return (
    <section>
      <div class="heading">
        <h1>{t('participants')}</h1>
        {authority ? null : (
          <a class="button primary" href={href('participants', 'new')}>
            {t('addParticipant')}
          </a>
        )}
      </div>
      {authority ? <p>{t('allProviders')}</p> : null}
      <form class="inline" role="search" onSubmit={(event) => event.preventDefault()}>
        <Field
          label={t('search')}
          name="query"
          type="search"
          value={query}
          onInput={(event) => searched(() => setQuery(event.currentTarget.value))}
        />
        <Field
          label={t('icd')}
          name="icd"
          inputMode="numeric"
          maxLength={4}
          value={icd}
          onInput={(event) => searched(() => setIcd(event.currentTarget.value))}
          error={list.problem?.fields.icd}
        />
      </form>
      {notice ? <Status text={notice} /> : null}
      <FormProblem problem={list.problem} shown={['icd']} />
      <DataTable
        caption={t('participants')}
        columns={columns}
        rows={list.data?.content}
        loading={list.loading}
        rowKey={(participant) => participant.identifier}
        sort={sort}
        onSort={(next) => {
          setSort(next);
          setPage(0);
        }}
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
      <ParticipantAttentionCard />
      {authority ? (
        <MlsReceiverCard authority onRegistered={list.reload} />
      ) : (
        <>
          <DeleteParticipant
            participant={deleting}
            onClose={() => setDeleting(null)}
            onDone={() => {
              setDeleting(null);
              done(t('deleted'));
            }}
          />
          <TransferParticipant
            participant={transferring}
            onClose={() => setTransferring(null)}
            onDone={() => {
              setTransferring(null);
              done(t('transferred'));
            }}
          />
          <MlsReceiverCard onRegistered={list.reload} />
          <Export />
        </>
      )}
    </section>
  );
}

function DeleteParticipant({
  participant,
  onClose,
  onDone,
}: {
  participant: Participant | null;
  onClose: () => void;
  onDone: () => void;
}) {
  const t = useT();
  const action = useAction();
  const confirm = () =>
    participant &&
    action.run(
      () =>
        ok(
          api.DELETE('/rest/api/participants/{identifier}', {
            params: { path: { identifier: participant.identifier } },
          }),
        ),
      onDone,
    );
  const problem =
    action.problem?.status === 404 && participant
      ? { ...action.problem, message: t('gone', { name: participantLabel(participant) }) }
      : action.problem;
  return (
    <Confirm
      open={participant !== null}
      title={t('delete')}
      confirmLabel={t('delete')}
      busy={action.busy}
      onConfirm={confirm}
      onCancel={() => {
        action.clear();
        onClose();
      }}
    >
      <p>
        {t('confirmDelete', {
          name: participant ? `${participant.name ?? ''} (${participant.qualifiedIdentifier})` : '',
        })}
      </p>
      <FormProblem problem={problem} />
    </Confirm>
  );
}

function TransferParticipant({
  participant,
  onClose,
  onDone,
}: {
  participant: Participant | null;
  onClose: () => void;
  onDone: () => void;
}) {
  const t = useT();
  const providers = useLoad(
    () => page(api.GET('/rest/api/service-providers', { params: { query: { size: 2000, sort: ['title'] } } })),
    [],
  );
  const [target, setTarget] = useState('');
  const action = useAction();
  const others = (providers.data?.content ?? []).filter(
    (provider) => provider.identifier !== participant?.provider.identifier,
  );
  const chosen = target || others[0]?.identifier || '';
  const confirm = () =>
    participant &&
    chosen &&
    action.run(
      () =>
        ok(
          api.PUT('/rest/api/participants/{identifier}/transfer/{serviceProviderIdentifier}', {
            params: { path: { identifier: participant.qualifiedIdentifier, serviceProviderIdentifier: chosen } },
          }),
        ),
      onDone,
    );
  return (
    <Confirm
      open={participant !== null}
      title={t('transferTitle', { name: participant?.name ?? participant?.organizationIdentifier ?? '' })}
      confirmLabel={t('transfer')}
      busy={action.busy || !chosen}
      onConfirm={confirm}
      onCancel={() => {
        action.clear();
        onClose();
      }}
    >
      <Select
        label={t('transferTo')}
        name="serviceProvider"
        value={chosen}
        options={others.map((provider) => [provider.identifier, provider.title])}
        onChange={(event) => setTarget(event.currentTarget.value)}
        error={action.problem?.fields.serviceProviderIdentifier}
      />
      <FormProblem problem={action.problem} shown={['serviceProviderIdentifier']} />
    </Confirm>
  );
}

const participantColumns = (t: Translate, language: string): Column<Participant>[] => [
  { key: 'name', label: t('name'), sortable: true, render: (participant) => participant.name ?? '' },
  { key: 'icd', label: t('icd'), sortable: true, render: (participant) => participant.icd },
  {
    key: 'organizationIdentifier',
    label: t('organizationNumber'),
    sortable: true,
    render: (participant) => participant.organizationIdentifier,
  },
  { key: 'contact.name', label: t('contact'), sortable: true, render: (participant) => participant.contact.name },
  {
    key: 'lastModificationDate',
    label: t('modified'),
    sortable: true,
    render: (participant) => day(participant.lastModificationDate, language),
  },
];

/** Saves `lines` as a file of the browser's downloads, as a click on a download link would. */
function download(lines: string[], name: string): void {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob(lines, { type: 'application/x-ndjson' }));
  link.download = name;
  link.click();
  // The download has taken the file once the click is handled.
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

/** Collects every participant page by page (with progress), then downloads the JSON lines file: one click. */
function Export() {
  const t = useT();
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [exported, setExported] = useState<number | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const collect = async () => {
    setProblem(null);
    setExported(null);
    const lines: string[] = [];
    try {
      for (let number = 0; ; number += 1) {
        const result = await page(
          api.GET('/rest/api/participants', {
            params: { query: { processes: true, page: number, size: 1000, sort: ['identifier'] } },
          }),
        );
        lines.push(...result.content.map(exportLine));
        setProgress({ done: lines.length, total: result.totalElements });
        if (result.last || result.content.length === 0) break;
      }
      download(lines, 'participants.jsonl');
      setExported(lines.length);
    } catch (error) {
      setProblem(problemFrom(error));
    } finally {
      setProgress(null);
    }
  };
  return (
    <section class="card">
      <h2>{t('export')}</h2>
      <p>{t('exportIntro')}</p>
      <button type="button" onClick={collect} disabled={progress !== null}>
        {t('exportDownload')}
      </button>
      {progress ? (
        <>
          <progress max={progress.total || 1} value={progress.done} aria-label={t('exporting')} />{' '}
          <Status text={`${t('exporting')} ${progress.done}/${progress.total}`} />
        </>
      ) : null}
      {exported === null ? null : <Status text={t('exportReady', { count: exported })} />}
      <FormProblem problem={problem} />
    </section>
  );
}
