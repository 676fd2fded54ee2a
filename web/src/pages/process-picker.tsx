import { useEffect, useRef, useState } from 'preact/hooks';
import type { Schemas } from '../api/client.js';
import { Field, Select } from '../components/ui.js';
import { isTextKey, useT, type Translate } from '../i18n.js';
import { hintBlocks, hintText, processHint } from '../rules.js';

type Process = Schemas['Process'];

/** Where focus goes after a process moved between the lists: the control now at that place, else the filter. */
interface FocusAfter {
  list: 'chosen' | 'candidates';
  index: number;
}

/** A domain in words: the code lists' codes (POAC, PRAC, OO) by name, any other as it is. */
export function domainName(t: Translate, domain: string): string {
  const key = `domain${domain}`;
  return isTextKey(key) ? t(key) : domain;
}

/** Whether the filter's text is in the process's title, domain, identifier, alias or one of its document types' titles. */
const matches = (process: Process, needle: string, t: Translate) =>
  [
    process.title,
    process.domain,
    domainName(t, process.domain),
    process.qualifiedIdentifier,
    process.alias ?? '',
    ...process.documentTypes.map((type) => type.title),
  ].some((text) => text.toLowerCase().includes(needle));

/** The processes `process` depends on that are not chosen, when each of them could itself be added now. */
function addableDependencies(
  process: Process,
  byId: ReadonlyMap<string, Process>,
  icd: string,
  chosen: ReadonlySet<string>,
): Process[] | undefined {
  const missing = process.dependencies
    .filter((dependency) => !chosen.has(dependency.identifier))
    .map((dependency) => byId.get(dependency.identifier));
  const addable = missing.every(
    (dependency) =>
      dependency &&
      !dependency.restricted &&
      (dependency.requiredICDs.length === 0 || dependency.requiredICDs.includes(icd)),
  );
  return addable ? (missing as Process[]) : undefined;
}

/**
 * The participant's processes: what is chosen (each removable, with the API's message or a rule it now breaks), apart
 * from the catalogue's processes that can be added, filtered by name, domain, identifier or document type. A process that cannot be
 * added says why (restricted, required ICD, missing dependency); one that lacks only addable dependencies can be added
 * with them. Buttons throughout, so it is all keyboard-operable; focus stays in place as processes move.
 */
export function ProcessPicker(props: {
  catalogue: Process[];
  icd: string;
  chosen: string[];
  kept: ReadonlySet<string>;
  messages: Record<string, string>;
  error?: string;
  onChange: (chosen: string[]) => void;
}) {
  const t = useT();
  const { catalogue, icd, chosen, kept } = props;
  const [filter, setFilter] = useState('');
  const [domain, setDomain] = useState('');
  const [announcement, setAnnouncement] = useState('');
  const [focusAfter, setFocusAfter] = useState<FocusAfter | null>(null);
  const root = useRef<HTMLFieldSetElement>(null);
  const filters = useRef<HTMLDivElement>(null);

  const byId = new Map(catalogue.map((process) => [process.identifier, process]));
  const chosenSet = new Set(chosen);
  const chosenProcesses = chosen
    .map((id) => byId.get(id))
    .filter((process): process is Process => process !== undefined);
  const needle = filter.trim().toLowerCase();
  const offered = catalogue.filter((process) => process.visible && !chosenSet.has(process.identifier));
  const candidates = offered.filter((process) => (!domain || process.domain === domain) && matches(process, needle, t));
  const domains = [...new Set(catalogue.filter((process) => process.visible).map((process) => process.domain))].sort(
    (a, b) => domainName(t, a).localeCompare(domainName(t, b)),
  );

  useEffect(() => {
    if (!focusAfter || !root.current) return;
    const buttons = [...root.current.querySelectorAll<HTMLButtonElement>(`ul.${focusAfter.list} > li button`)];
    const target = buttons[Math.min(focusAfter.index, buttons.length - 1)] ?? filters.current?.querySelector('input');
    target?.focus();
    setFocusAfter(null);
  }, [focusAfter]);

  const add = (processes: Process[], index: number) => {
    props.onChange([...chosen, ...processes.map((process) => process.identifier)]);
    setAnnouncement(t('added', { name: processes.map((process) => process.title).join(', ') }));
    setFocusAfter({ list: 'candidates', index });
  };
  const remove = (process: Process, index: number) => {
    props.onChange(chosen.filter((id) => id !== process.identifier));
    setAnnouncement(t('removed', { name: process.title }));
    setFocusAfter({ list: 'chosen', index });
  };

  return (
    <fieldset class="picker" ref={root}>
      <legend>{t('processes')}</legend>
      {props.error ? <p class="field-error">{props.error}</p> : null}
      <h3 id="chosen-heading">{t('chosenProcesses', { count: chosenProcesses.length })}</h3>
      {chosenProcesses.length === 0 ? <p class="hint">{t('noneChosen')}</p> : null}
      <ul class="chosen process-list" aria-labelledby="chosen-heading">
        {chosenProcesses.map((process, index) => {
          const hint = processHint(process, icd, chosenSet, kept);
          const message = props.messages[process.identifier];
          const note = [hintBlocks(hint) ? hintText(t, hint) : '', message ?? ''].filter(Boolean).join(' ');
          const noteId = `chosen-${process.identifier}-note`;
          return (
            <li key={process.identifier} class={note ? 'warn' : undefined}>
              <ProcessName process={process} />
              <button
                type="button"
                aria-label={`${t('remove')}: ${process.title}`}
                aria-describedby={note ? noteId : undefined}
                onClick={() => remove(process, index)}
              >
                {t('remove')}
              </button>
              {note ? (
                <p class="field-error" id={noteId}>
                  {note}
                </p>
              ) : null}
            </li>
          );
        })}
      </ul>
      <h3 id="candidates-heading">{t('addProcesses')}</h3>
      <div class="picker-filters" ref={filters}>
        <Field
          label={t('filterProcesses')}
          name="processFilter"
          type="search"
          value={filter}
          autocomplete="off"
          onInput={(event) => setFilter(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter') event.preventDefault();
          }}
        />
        <Select
          label={t('domain')}
          name="processDomain"
          value={domain}
          options={[['', t('allDomains')], ...domains.map((name): [string, string] => [name, domainName(t, name)])]}
          onChange={(event) => setDomain(event.currentTarget.value)}
        />
      </div>
      <p class="hint" role="status">
        {announcement ? `${announcement} ` : ''}
        {t('shownOf', { shown: candidates.length, total: offered.length })}
      </p>
      {/* A scrolled box: focusable, so that a keyboard scrolls it even when it holds no button. */}
      <ul class="candidates process-list" aria-labelledby="candidates-heading" tabIndex={0}>
        {candidates.map((process, index) => {
          const hint = processHint(process, icd, chosenSet, kept);
          const blocked = hintBlocks(hint);
          const dependencies =
            blocked && !hint.restricted && hint.requiredIcds.length === 0
              ? addableDependencies(process, byId, icd, chosenSet)
              : undefined;
          const reasonId = `candidate-${process.identifier}-reason`;
          return (
            <li key={process.identifier} class={blocked ? 'blocked' : undefined}>
              <ProcessName process={process} />
              {!blocked ? (
                <button
                  type="button"
                  aria-label={`${t('addThis')}: ${process.title}`}
                  onClick={() => add([process], index)}
                >
                  {t('addThis')}
                </button>
              ) : null}
              {dependencies ? (
                <button
                  type="button"
                  aria-describedby={reasonId}
                  onClick={() => add([...dependencies, process], index)}
                >
                  {t('addWithDependencies', { names: dependencies.map((dependency) => dependency.title).join(', ') })}
                </button>
              ) : null}
              {blocked ? (
                <p class="hint" id={reasonId}>
                  <strong>{t('cannotAddYet')}:</strong> {hintText(t, hint)}
                </p>
              ) : null}
            </li>
          );
        })}
      </ul>
      {candidates.length === 0 ? <p class="empty">{t('noProcessMatches')}</p> : null}
    </fieldset>
  );
}

function ProcessName({ process }: { process: Process }) {
  const t = useT();
  return (
    <span class="process-name">
      <strong>{process.title}</strong> <span class="domain">{domainName(t, process.domain)}</span>{' '}
      <code class="id">{process.qualifiedIdentifier}</code>
    </span>
  );
}
