import { useContext, useState } from 'preact/hooks';
import { api, ok, type Problem, type Schemas } from '../api/client.js';
import { Field, FormProblem, problemFrom, Status } from '../components/ui.js';
import { day } from '../format.js';
import { I18n, useT } from '../i18n.js';
import { receivableDocumentTypes } from '../receivable.js';

export const PARTICIPANT_SCHEME = 'iso6523-actorid-upis';
export const participantIdOf = (icd: string, number: string) => `${PARTICIPANT_SCHEME}::${icd}:${number.trim().toLowerCase()}`;

export function Lookup() {
  const t = useT();
  const [icd, setIcd] = useState('0192');
  const [number, setNumber] = useState('');
  const [result, setResult] = useState<{ participantId: string; processes: Schemas['OrganizationProcess'][] | null } | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);

  const find = async (event: Event) => {
    event.preventDefault();
    const participantId = participantIdOf(icd, number);
    setBusy(true);
    setProblem(null);
    try {
      const response = await api.GET('/rest/api/organizations/{qualifiedIdentifier}/processes', { params: { path: { qualifiedIdentifier: participantId } } });
      if (response.response.status === 404) setResult({ participantId, processes: null });
      else setResult({ participantId, processes: await ok(Promise.resolve(response)) });
    } catch (error) {
      setProblem(problemFrom(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section>
      <h1>{t('lookupTitle')}</h1>
      <p>{t('lookupIntro')}</p>
      <form class="inline" onSubmit={find} role="search">
        <Field label={t('icd')} name="icd" inputMode="numeric" pattern="[0-9]{4}" maxLength={4} required value={icd} list="icds"
          onInput={(event) => setIcd(event.currentTarget.value)} error={problem?.fields.qualifiedIdentifier} />
        <datalist id="icds">{['0192', '0007', '0088', '0184', '0037', '0208'].map((code) => <option key={code} value={code} />)}</datalist>
        <Field label={t('organizationNumber')} name="organizationNumber" required value={number} onInput={(event) => setNumber(event.currentTarget.value)} />
        <button type="submit" class="primary" disabled={busy}>{t('find')}</button>
      </form>
      <FormProblem problem={problem} shown={['qualifiedIdentifier']} />
      <div class="result" aria-live="polite" aria-busy={busy}>
        {busy ? <Status text={t('loading')} /> : null}
        {result && !busy ? <OrganizationProcesses {...result} /> : null}
      </div>
    </section>
  );
}

function OrganizationProcesses({ participantId, processes }: { participantId: string; processes: Schemas['OrganizationProcess'][] | null }) {
  const t = useT();
  const { language } = useContext(I18n);
  if (processes === null) return <p class="status">{t('notRegistered')} <code>{participantId}</code></p>;
  const since = (date: string) => <span class="since">{t('since', { date: day(date, language) })}</span>;
  return (
    <article class="card">
      <h2><code>{participantId}</code></h2>
      <p><a href={`/${participantId}`}>{t('smpLookup')}</a></p>
      <h3>{t('processes')}</h3>
      <ul class="processes">
        {processes.map((process) => (
          <li key={process.identifier}>
            <strong>{process.title}</strong> · {since(process.receivableSince)} <code class="id">{process.qualifiedIdentifier}</code>
            <ul>{process.documentTypes.map((documentType) => <li key={documentType.identifier}>{documentType.title} <code class="id">{documentType.qualifiedIdentifier}</code></li>)}</ul>
          </li>
        ))}
      </ul>
      <h3>{t('documentTypes')}</h3>
      <ul class="processes">
        {receivableDocumentTypes(processes).map((type) => (
          <li key={type.identifier}><strong>{type.title}</strong> · {since(type.since)} <code class="id">{type.qualifiedIdentifier}</code></li>
        ))}
      </ul>
      <p class="hint">{t('sinceNote')}</p>
    </article>
  );
}
