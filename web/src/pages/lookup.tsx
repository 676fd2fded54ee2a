import { useContext, useEffect, useState } from 'preact/hooks';
import { api, ok, type Problem, type Schemas } from '../api/client.js';
import { IcdField } from '../components/icd-field.js';
import { Field, FormProblem, problemFrom, Status } from '../components/ui.js';
import { day } from '../format.js';
import { organizationNumberOf } from '../forms.js';
import { I18n, useT } from '../i18n.js';
import { receivableDocumentTypes } from '../receivable.js';
import { navigate } from '../router.js';

export const PARTICIPANT_SCHEME = 'iso6523-actorid-upis';
export const participantIdOf = (icd: string, number: string) =>
  `${PARTICIPANT_SCHEME}::${icd}:${organizationNumberOf(number).toLowerCase()}`;

interface Found {
  participantId: string;
  /** Null: no participant is registered for the organization. */
  found: { summary: Schemas['OrganizationSummary']; processes: Schemas['OrganizationProcess'][] } | null;
}

/**
 * The public lookup. The organization asked for is in the address (`#/lookup/0192/921000049`): a result can be
 * bookmarked and shared, and Back returns to the one before.
 */
export function Lookup({ asked }: { asked: { icd: string; number: string } | undefined }) {
  const t = useT();
  const [icd, setIcd] = useState(asked?.icd ?? '0192');
  const [number, setNumber] = useState(asked?.number ?? '');
  const [result, setResult] = useState<Found | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);

  const find = async (participantId: string) => {
    setBusy(true);
    setProblem(null);
    try {
      const path = { params: { path: { qualifiedIdentifier: participantId } } };
      const [summary, processes] = await Promise.all([
        api.GET('/rest/api/organizations/{qualifiedIdentifier}', path),
        api.GET('/rest/api/organizations/{qualifiedIdentifier}/processes', path),
      ]);
      if (summary.response.status === 404 || processes.response.status === 404)
        setResult({ participantId, found: null });
      else
        setResult({
          participantId,
          found: { summary: await ok(Promise.resolve(summary)), processes: await ok(Promise.resolve(processes)) },
        });
    } catch (error) {
      setProblem(problemFrom(error));
    } finally {
      setBusy(false);
    }
  };
  // The address changed (a search, Back, a bookmark): its organization is shown, and the form says which it is.
  useEffect(() => {
    if (!asked) {
      setResult(null);
      return;
    }
    setIcd(asked.icd);
    setNumber(asked.number);
    void find(participantIdOf(asked.icd, asked.number));
  }, [asked?.icd, asked?.number]);

  const submit = (event: Event) => {
    event.preventDefault();
    const typed = organizationNumberOf(number);
    if (asked?.icd === icd && asked.number === typed) void find(participantIdOf(icd, typed));
    else navigate('lookup', icd, typed);
  };

  return (
    <section>
      <h1>{t('lookupTitle')}</h1>
      <p>{t('lookupIntro')}</p>
      <form class="inline" onSubmit={submit} role="search">
        <IcdField
          label={t('icd')}
          name="icd"
          pattern="[0-9]{4}"
          required
          value={icd}
          onInput={(event) => setIcd(event.currentTarget.value)}
          error={problem?.fields.qualifiedIdentifier}
        />
        <Field
          label={t('organizationNumber')}
          name="organizationNumber"
          required
          value={number}
          onInput={(event) => setNumber(event.currentTarget.value)}
        />
        <button type="submit" class="primary" disabled={busy}>
          {t('find')}
        </button>
      </form>
      <FormProblem problem={problem} shown={['qualifiedIdentifier']} />
      <div class="result" aria-live="polite" aria-busy={busy}>
        {busy ? <Status text={t('loading')} /> : null}
        {result && !busy ? <OrganizationProcesses {...result} /> : null}
      </div>
    </section>
  );
}

/** Who the organization is and who serves it, then what it can receive: each process once, each document type once. */
function OrganizationProcesses({ participantId, found }: Found) {
  const t = useT();
  const { language } = useContext(I18n);
  if (found === null)
    return (
      <p class="status">
        {t('notRegistered')} <code>{participantId}</code>
      </p>
    );
  const { summary, processes } = found;
  const since = (date: string) => <span class="since">{t('since', { date: day(date, language) })}</span>;
  return (
    <article class="card organization">
      <h2>{summary.name ?? participantId}</h2>
      <dl class="summary">
        <div>
          <dt>{t('identifier')}</dt>
          <dd>
            <code>{participantId}</code> · <a href={`/${participantId}`}>{t('smpLookup')}</a>
          </dd>
        </div>
        <div>
          <dt>{t('servedBy')}</dt>
          <dd>{summary.providers.map((provider) => provider.title).join(', ')}</dd>
        </div>
      </dl>
      <h3>{t('processes')}</h3>
      <ul class="processes">
        {processes.map((process) => (
          <li key={process.identifier}>
            <strong>{process.title}</strong> · {since(process.receivableSince)}{' '}
            <code class="id">{process.qualifiedIdentifier}</code>
          </li>
        ))}
      </ul>
      <h3>{t('documentTypes')}</h3>
      <ul class="processes">
        {receivableDocumentTypes(processes).map((type) => (
          <li key={type.identifier}>
            <strong>{type.title}</strong> · {since(type.since)} <code class="id">{type.qualifiedIdentifier}</code>
          </li>
        ))}
      </ul>
      <p class="hint">{t('sinceNote')}</p>
    </article>
  );
}
