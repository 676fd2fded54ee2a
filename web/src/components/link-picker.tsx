import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useT } from '../i18n.js';
import { Field } from './ui.js';

/** What a link points to: a catalogue entry by its identifier, shown by its title (and, when it has one, its code). */
export interface Linkable {
  identifier: string;
  title: string;
  qualifiedIdentifier?: string;
}

/** The most candidates listed at once: the filter narrows the rest (the official lists hold hundreds). */
const SHOWN_AT_MOST = 50;

/** Runs `reset` when the form around `element` is reset (an add form after its save): its state is the form's too. */
export function useFormReset(element: { current: HTMLElement | null }, reset: () => void): void {
  useEffect(() => {
    const form = element.current?.closest('form');
    form?.addEventListener('reset', reset);
    return () => form?.removeEventListener('reset', reset);
  }, []);
}

/**
 * The links of a form to other entries (a process's document types, a document type's processes): the chosen, each
 * removable, then the entries (`what`, a plural noun) that can be added, filtered by title or code. Each chosen entry is a hidden input
 * `name` carrying its identifier, so the form's body reads them as it reads its other fields (`getAll(name)`).
 */
export function LinkPicker(props: {
  name: string;
  legend: string;
  what: string;
  options: Linkable[];
  initial: Linkable[];
  error?: string;
}) {
  const t = useT();
  const id = useId();
  const root = useRef<HTMLFieldSetElement>(null);
  const [chosen, setChosen] = useState<Linkable[]>(props.initial);
  const [filter, setFilter] = useState('');
  const [announcement, setAnnouncement] = useState('');
  useFormReset(root, () => {
    setChosen(props.initial);
    setFilter('');
    setAnnouncement('');
  });
  const chosenIds = new Set(chosen.map((entry) => entry.identifier));
  const needle = filter.trim().toLowerCase();
  const offered = props.options.filter((entry) => !chosenIds.has(entry.identifier));
  const matching = offered.filter((entry) =>
    `${entry.title} ${entry.qualifiedIdentifier ?? ''}`.toLowerCase().includes(needle),
  );
  const shown = matching.slice(0, SHOWN_AT_MOST);
  const focusFilter = () => root.current?.querySelector<HTMLInputElement>('input[type="search"]')?.focus();
  const add = (entry: Linkable) => {
    setChosen([...chosen, entry]);
    setFilter('');
    setAnnouncement(t('added', { name: entry.title }));
    focusFilter();
  };
  const remove = (entry: Linkable) => {
    setChosen(chosen.filter((other) => other.identifier !== entry.identifier));
    setAnnouncement(t('removed', { name: entry.title }));
    focusFilter();
  };
  return (
    <fieldset class="picker links" ref={root}>
      <legend>{props.legend}</legend>
      {props.error ? <p class="field-error">{props.error}</p> : null}
      <h3 id={`${id}-chosen`}>{t('chosenProcesses', { count: chosen.length })}</h3>
      {chosen.length === 0 ? <p class="hint">{t('linksNoneChosen')}</p> : null}
      <ul class="chosen process-list" aria-labelledby={`${id}-chosen`}>
        {chosen.map((entry) => (
          <li key={entry.identifier}>
            <input type="hidden" name={props.name} value={entry.identifier} />
            <EntryName entry={entry} />
            <button type="button" aria-label={`${t('remove')}: ${entry.title}`} onClick={() => remove(entry)}>
              {t('remove')}
            </button>
          </li>
        ))}
      </ul>
      <Field
        label={t('linksFilter', { what: props.what })}
        name={`${props.name}Filter`}
        type="search"
        value={filter}
        autocomplete="off"
        onInput={(event) => setFilter(event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter') event.preventDefault();
        }}
      />
      <p class="hint" role="status">
        {announcement ? `${announcement} ` : ''}
        {t('shownOf', { shown: shown.length, total: offered.length })}
      </p>
      {shown.length > 0 ? (
        <ul class="candidates process-list" aria-label={t('linksCandidates', { what: props.what })} tabIndex={0}>
          {shown.map((entry) => (
            <li key={entry.identifier}>
              <EntryName entry={entry} />
              <button type="button" aria-label={`${t('addThis')}: ${entry.title}`} onClick={() => add(entry)}>
                {t('addThis')}
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p class="empty">{t('none')}</p>
      )}
    </fieldset>
  );
}

function EntryName({ entry }: { entry: Linkable }) {
  return (
    <span class="process-name">
      <strong>{entry.title}</strong>
      {entry.qualifiedIdentifier ? (
        <>
          {' '}
          <code class="id">{entry.qualifiedIdentifier}</code>
        </>
      ) : null}
    </span>
  );
}
