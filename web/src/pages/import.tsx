import { useState } from 'preact/hooks';
import { api, problemOf } from '../api/client.js';
import { DataTable, Status, type Column } from '../components/ui.js';
import { useT } from '../i18n.js';
import { parseParticipantLines } from '../jsonl.js';

/** A line's outcome, by the command line's words (`registry import-participants`): imported, already present, refused. */
type Outcome = 'imported' | 'present' | 'refused';

interface LineResult {
  number: number;
  outcome: Outcome;
  text: string;
}

const OUTCOME_TEXT = { imported: 'importImported', present: 'importPresent', refused: 'importRefused' } as const;

/** The API's answer to a line's add: a participant the provider has already is "already present", as the command line counts it. */
function outcomeOf(status: number, message: string): Outcome {
  if (status >= 200 && status < 300) return 'imported';
  return status === 409 && /already has a participant/.test(message) ? 'present' : 'refused';
}

/** The API has no bulk add: each line goes through the add operation, with progress and a result per line. */
export function ImportParticipants() {
  const t = useT();
  const [file, setFile] = useState<File | null>(null);
  const [results, setResults] = useState<LineResult[]>([]);
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [running, setRunning] = useState(false);

  const run = async (event: Event) => {
    event.preventDefault();
    if (!file) return;
    const lines = parseParticipantLines(await file.text());
    const collected: LineResult[] = [];
    setResults([]);
    setRunning(true);
    setProgress({ done: 0, total: lines.length });
    for (const line of lines) {
      if ('error' in line) {
        collected.push({ number: line.number, outcome: 'refused', text: line.error });
      } else {
        const { response, error } = await api.POST('/rest/api/participants', { body: line.form });
        const problem = problemOf(response.status, error);
        const outcome = outcomeOf(response.status, problem.message);
        const details = Object.entries(problem.fields).map(([field, message]) => `${field}: ${message}`);
        const text = outcome === 'refused' ? [problem.message, ...details].join(' — ') : `${line.form.icd}:${line.form.organizationIdentifier}`;
        collected.push({ number: line.number, outcome, text });
      }
      setProgress({ done: collected.length, total: lines.length });
      setResults([...collected]);
    }
    setRunning(false);
  };

  const count = (outcome: Outcome) => results.filter((result) => result.outcome === outcome).length;
  const columns: Column<LineResult>[] = [
    { key: 'number', label: t('line'), render: (result) => result.number },
    {
      key: 'result', label: t('result'), render: (result) => (
        <span class={result.outcome === 'refused' ? 'failed' : 'ok'}>{result.outcome === 'refused' ? '✗' : '✓'} {t(OUTCOME_TEXT[result.outcome])}: {result.text}</span>
      ),
    },
  ];
  return (
    <section>
      <h1>{t('importTitle')}</h1>
      <p>{t('importIntro')}</p>
      <form class="inline" onSubmit={run}>
        <div class="field">
          <label for="import-file">{t('file')}</label>
          <input id="import-file" type="file" accept=".jsonl,.ndjson,.json,application/x-ndjson,text/plain" required onChange={(event) => setFile(event.currentTarget.files?.[0] ?? null)} />
        </div>
        <button type="submit" class="primary" disabled={!file || running}>{t('start')}</button>
      </form>
      <div class="progress-row">
        <progress aria-label={t('progressLabel')} max={progress?.total || 1} value={progress?.done ?? 0} />
        {running && progress ? <Status text={`${progress.done} / ${progress.total}`} /> : null}
        {!running && progress ? <Status text={t('importReport', { imported: count('imported'), present: count('present'), refused: count('refused'), total: results.length })} /> : null}
      </div>
      {results.length > 0 ? <DataTable caption={t('result')} columns={columns} rows={results} loading={running} rowKey={(result) => String(result.number)} /> : null}
    </section>
  );
}
