import { useState } from 'preact/hooks';
import { api, problemOf } from '../api/client.js';
import { DataTable, Status, type Column } from '../components/ui.js';
import { useT } from '../i18n.js';
import { parseParticipantLines } from '../jsonl.js';

interface LineResult {
  number: number;
  ok: boolean;
  text: string;
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
        collected.push({ number: line.number, ok: false, text: line.error });
      } else {
        const { response, error } = await api.POST('/rest/api/participants', { body: line.form });
        if (response.ok) collected.push({ number: line.number, ok: true, text: `${t('imported')}: ${line.form.icd}:${line.form.organizationIdentifier}` });
        else {
          const problem = problemOf(response.status, error);
          const details = Object.entries(problem.fields).map(([field, message]) => `${field}: ${message}`);
          collected.push({ number: line.number, ok: false, text: [problem.message, ...details].join(' — ') });
        }
      }
      setProgress({ done: collected.length, total: lines.length });
      setResults([...collected]);
    }
    setRunning(false);
  };

  const failed = results.filter((result) => !result.ok).length;
  const columns: Column<LineResult>[] = [
    { key: 'number', label: t('line'), render: (result) => result.number },
    { key: 'result', label: t('result'), render: (result) => <span class={result.ok ? 'ok' : 'failed'}>{result.ok ? '✓ ' : '✗ '}{result.text}</span> },
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
        {!running && progress ? <Status text={t('importSummary', { ok: results.length - failed, failed, total: results.length })} /> : null}
      </div>
      {results.length > 0 ? <DataTable caption={t('result')} columns={columns} rows={results} loading={running} rowKey={(result) => String(result.number)} /> : null}
    </section>
  );
}
