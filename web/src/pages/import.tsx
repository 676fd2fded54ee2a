import { useState } from 'preact/hooks';
import { api, isProblem, problemOf, unreachable } from '../api/client.js';
import { DataTable, Status, type Column } from '../components/ui.js';
import { participantFieldWords } from '../words.js';
import { useT, type Translate } from '../i18n.js';
import { parseParticipantLines, type ParsedLine } from '../jsonl.js';

/** A line's outcome, by the command line's words (`registry import-participants`): imported, already present, refused. */
type Outcome = 'imported' | 'present' | 'refused' | 'unsent';

interface LineResult {
  number: number;
  outcome: Outcome;
  text: string;
  /** A refused line's fields, in the form's words, each with what is wrong with it. */
  fields: Array<[string, string]>;
}

/** One line as the export writes it and the import reads it. */
const EXAMPLE_LINE = JSON.stringify({
  icd: '0192',
  organizationIdentifier: '921000049',
  name: 'Newcomer Bakery AS',
  processes: [{ qualifiedIdentifier: 'cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0' }],
  contact: { name: 'Kari Nordmann', email: 'kari@bakery.example' },
});

const OUTCOME_TEXT = {
  imported: 'importImported',
  present: 'importPresent',
  refused: 'importRefused',
  unsent: 'importRefused',
} as const;

/** The API's answer to a line's add: a participant the provider has already is "already present", as the command line counts it. */
function outcomeOf(status: number, message: string): Outcome {
  if (status >= 200 && status < 300) return 'imported';
  return status === 409 && /already has a participant/.test(message) ? 'present' : 'refused';
}

/**
 * One line through the add operation. A refusal of fields names each in the form's words, rather than "check the
 * marked fields" of a form that is not there; a registry out of reach leaves the line (and the rest) unsent.
 */
async function importLine(line: ParsedLine, t: Translate): Promise<LineResult> {
  if ('error' in line) return { number: line.number, outcome: 'refused', text: line.error, fields: [] };
  const answer = await api
    .POST('/rest/api/participants', { body: line.form })
    .catch((error: unknown) => (isProblem(error) ? error : unreachable(t)));
  if ('status' in answer) return { number: line.number, outcome: 'unsent', text: t('importUnreachable'), fields: [] };
  const problem = problemOf(answer.response.status, answer.error, t);
  const outcome = outcomeOf(answer.response.status, problem.message);
  if (outcome !== 'refused')
    return { number: line.number, outcome, text: `${line.form.icd}:${line.form.organizationIdentifier}`, fields: [] };
  const fields = Object.entries(problem.fields).map(([field, message]): [string, string] => [
    participantFieldWords(t, field),
    message,
  ]);
  return { number: line.number, outcome, text: fields.length > 0 ? t('importLineRefused') : problem.message, fields };
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
      const result = await importLine(line, t);
      collected.push(result);
      setProgress({ done: collected.length, total: lines.length });
      setResults([...collected]);
      if (result.outcome === 'unsent') break;
    }
    setRunning(false);
  };

  const count = (outcome: Outcome) => results.filter((result) => result.outcome === outcome).length;
  const isRefused = (result: LineResult) => result.outcome === 'refused' || result.outcome === 'unsent';
  const columns: Column<LineResult>[] = [
    { key: 'number', label: t('line'), render: (result) => result.number },
    {
      key: 'result',
      label: t('result'),
      render: (result) => (
        <>
          <span class={isRefused(result) ? 'failed' : 'ok'}>
            {isRefused(result) ? '✗' : '✓'} {t(OUTCOME_TEXT[result.outcome])}: {result.text}
          </span>
          {result.fields.length > 0 ? (
            <ul class="line-fields">
              {result.fields.map(([field, message]) => (
                <li key={field}>
                  <mark>{field}</mark>: {message}
                </li>
              ))}
            </ul>
          ) : null}
        </>
      ),
    },
  ];
  return (
    <section>
      <h1>{t('importTitle')}</h1>
      <p>{t('importIntro')}</p>
      <p>{t('importExample')}</p>
      <pre class="example">
        <code>{EXAMPLE_LINE}</code>
      </pre>
      <form class="inline" onSubmit={run}>
        <div class="field">
          <label for="import-file">{t('file')}</label>
          <input
            id="import-file"
            type="file"
            accept=".jsonl,.ndjson,.json,application/x-ndjson,text/plain"
            required
            onChange={(event) => setFile(event.currentTarget.files?.[0] ?? null)}
          />
        </div>
        <button type="submit" class="primary" disabled={!file || running}>
          {t('start')}
        </button>
      </form>
      <div class="progress-row">
        <progress aria-label={t('progressLabel')} max={progress?.total || 1} value={progress?.done ?? 0} />
        {running && progress ? <Status text={`${progress.done} / ${progress.total}`} /> : null}
        {!running && progress ? (
          <Status
            text={t('importReport', {
              imported: count('imported'),
              present: count('present'),
              refused: results.filter(isRefused).length,
              total: progress.total,
            })}
          />
        ) : null}
      </div>
      {results.length > 0 ? (
        <DataTable
          caption={t('result')}
          columns={columns}
          rows={results}
          loading={running}
          rowKey={(result) => String(result.number)}
        />
      ) : null}
    </section>
  );
}
