import type { ComponentChildren, InputHTMLAttributes, SelectHTMLAttributes, TextareaHTMLAttributes } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { isProblem, placeMessages, withoutField, type Problem } from '../api/client.js';
import { useT } from '../i18n.js';

/**
 * A labelled input (or, with `multiline`, a text area) with the API's message for its field right under it, tied
 * to it for screen readers.
 */
export function Field(
  props: { label: string; error?: string; hint?: string; multiline?: boolean } & InputHTMLAttributes<HTMLInputElement>,
) {
  const { label, error, hint, multiline, ...input } = props;
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const control = { id, 'aria-invalid': error ? true : undefined, 'aria-describedby': described, ...input };
  return (
    <div class="field">
      <label for={id}>
        {label}
        {input.required ? <span aria-hidden="true"> *</span> : null}
      </label>
      {multiline ? (
        <textarea {...(control as TextareaHTMLAttributes<HTMLTextAreaElement>)} rows={4} />
      ) : (
        <input {...control} />
      )}
      {hint ? <small id={`${id}-hint`}>{hint}</small> : null}
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** A labelled select; `initial` is the option chosen when it first shows (the select stays the user's after). */
export function Select(
  props: {
    label: string;
    error?: string;
    options: Array<[string, string]>;
    initial?: string;
  } & SelectHTMLAttributes<HTMLSelectElement>,
) {
  const { label, error, options, initial, ...select } = props;
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        {...select}
      >
        {options.map(([value, text]) => (
          <option key={value} value={value} selected={initial === undefined ? undefined : value === initial}>
            {text}
          </option>
        ))}
      </select>
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** A labelled checkbox. */
export function Check(props: { label: string } & InputHTMLAttributes<HTMLInputElement>) {
  const { label, ...input } = props;
  const id = useId();
  return (
    <div class="check">
      <input type="checkbox" id={id} {...input} />
      <label for={id}>{label}</label>
    </div>
  );
}

/** The API's message for the whole form, and every field message that none of the form's fields (`shown`) takes. */
export function FormProblem({ problem, shown = [] }: { problem: Problem | null; shown?: readonly string[] }) {
  if (!problem) return null;
  const others = placeMessages(problem.fields, shown).unplaced;
  return (
    <div class="problem" role="alert">
      <p>{problem.message}</p>
      {others.length > 0 ? (
        <ul>
          {others.map(([field, message]) => (
            <li key={field}>
              <code>{field}</code>: {message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** The messages of a form's fields (`shown`): `at(field)` is the message of that field and of what is within it. */
export const fieldMessages = (problem: Problem | null, shown: readonly string[]) =>
  placeMessages(problem?.fields ?? {}, shown).at;

/** The name of the control an input event came from: its message is stale once the user changes it. */
export const changedField = (event: Event) =>
  event.target instanceof HTMLElement ? (event.target.getAttribute('name') ?? '') : '';

export function problemFrom(error: unknown): Problem {
  return isProblem(error) ? error : { status: 0, message: String(error), fields: {} };
}

/** Runs one write at a time: busy while it runs, the API's problem when it fails, `done` when it succeeds. */
export function useAction() {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>, done: () => void) => {
    setBusy(true);
    setProblem(null);
    try {
      await action();
      done();
    } catch (error) {
      setProblem(problemFrom(error));
    } finally {
      setBusy(false);
    }
  };
  /** A form's `onInput`: the message of the field the user changes goes. */
  const forget = (event: Event) => setProblem((current) => withoutField(current, changedField(event)));
  return { problem, busy, run, forget, clear: () => setProblem(null) };
}

/** Runs `load` whenever `key` changes; keeps the previous data while the next loads (no layout jump). */
export function useLoad<T>(
  load: () => Promise<T>,
  key: unknown[],
): { data: T | undefined; loading: boolean; problem: Problem | null; reload: () => void } {
  const [state, setState] = useState<{ data: T | undefined; loading: boolean; problem: Problem | null }>({
    data: undefined,
    loading: true,
    problem: null,
  });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false, problem: null }),
      (error: unknown) =>
        current && setState((previous) => ({ ...previous, loading: false, problem: problemFrom(error) })),
    );
    return () => {
      current = false;
    };
  }, [...key, round]);
  return { ...state, reload: () => setRound((value) => value + 1) };
}

export interface Column<T> {
  key: string;
  label: string;
  sortable?: boolean;
  render: (row: T) => ComponentChildren;
}

export interface Sort {
  property: string;
  direction: 'ASC' | 'DESC';
}

/** A table whose rows take their room before they arrive: `placeholderRows` empty rows while loading. */
export function DataTable<T>(props: {
  caption: string;
  columns: Column<T>[];
  rows: T[] | undefined;
  loading: boolean;
  rowKey: (row: T, index: number) => string;
  sort?: Sort;
  onSort?: (sort: Sort) => void;
  placeholderRows?: number;
}) {
  const t = useT();
  const { columns, rows, sort } = props;
  const ariaSort = (key: string) =>
    sort?.property === key ? (sort.direction === 'ASC' ? 'ascending' : 'descending') : undefined;
  const sortable = columns.filter((column) => column.sortable);
  return (
    <div class="table-wrap" aria-busy={props.loading}>
      {props.onSort && sortable.length > 0 ? (
        <div class="sort-select">
          <Select
            label={t('sortOrder')}
            value={sort ? `${sort.property},${sort.direction}` : ''}
            options={sortable.flatMap(
              (column) =>
                [
                  [`${column.key},ASC`, `${column.label} ▲`],
                  [`${column.key},DESC`, `${column.label} ▼`],
                ] as Array<[string, string]>,
            )}
            onChange={(event) => {
              const [property = '', direction] = event.currentTarget.value.split(',');
              props.onSort?.({ property, direction: direction === 'DESC' ? 'DESC' : 'ASC' });
            }}
          />
        </div>
      ) : null}
      <table>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.key} scope="col" aria-sort={ariaSort(column.key)}>
                {column.sortable && props.onSort ? (
                  <button
                    type="button"
                    class="sort"
                    aria-label={t('sortBy', { column: column.label })}
                    onClick={() =>
                      props.onSort?.({
                        property: column.key,
                        direction: sort?.property === column.key && sort.direction === 'ASC' ? 'DESC' : 'ASC',
                      })
                    }
                  >
                    {column.label}{' '}
                    <span aria-hidden="true">
                      {sort?.property === column.key ? (sort.direction === 'ASC' ? '▲' : '▼') : '↕'}
                    </span>
                  </button>
                ) : (
                  column.label
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows === undefined
            ? Array.from({ length: props.placeholderRows ?? 5 }, (_, index) => (
                <tr key={index} class="placeholder">
                  {columns.map((column) => (
                    <td key={column.key} data-label={column.label}>
                      &nbsp;
                    </td>
                  ))}
                </tr>
              ))
            : rows.map((row, index) => (
                <tr key={props.rowKey(row, index)}>
                  {columns.map((column) => (
                    <td key={column.key} data-label={column.label}>
                      {column.render(row)}
                    </td>
                  ))}
                </tr>
              ))}
        </tbody>
      </table>
      {rows !== undefined && rows.length === 0 ? <p class="empty">{t('none')}</p> : null}
    </div>
  );
}

/** Paging of a list; while its first page loads (`totalElements` unknown) it says so rather than "0 in all". */
export function Pager(props: {
  page: number;
  totalPages?: number;
  totalElements?: number;
  size: number;
  onPage: (page: number) => void;
  onSize: (size: number) => void;
}) {
  const t = useT();
  const pages = Math.max(props.totalPages ?? 1, 1);
  return (
    <nav class="pager" aria-label={t('pageOf', { page: props.page + 1, pages })}>
      <button type="button" disabled={props.page <= 0} onClick={() => props.onPage(props.page - 1)}>
        {t('previous')}
      </button>
      <span>
        {props.totalElements === undefined ? (
          t('loadingPage')
        ) : (
          <>
            {t('pageOf', { page: props.page + 1, pages })} · {t('totalOf', { total: props.totalElements })}
          </>
        )}
      </span>
      <button type="button" disabled={props.page + 1 >= pages} onClick={() => props.onPage(props.page + 1)}>
        {t('next')}
      </button>
      <Select
        label={t('pageSize')}
        value={String(props.size)}
        options={[
          ['10', '10'],
          ['30', '30'],
          ['100', '100'],
        ]}
        onChange={(event) => props.onSize(Number(event.currentTarget.value))}
      />
    </nav>
  );
}

/** A modal (the browser's <dialog>: focus kept inside, Escape closes), open while `open`. */
export function Modal(props: {
  open: boolean;
  title: string;
  children?: ComponentChildren;
  onClose: () => void;
  wide?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (props.open && !element.open) {
      element.showModal();
      // The dialog's own choice of where focus starts (a confirmation's Cancel), else the browser's first control.
      element.querySelector<HTMLElement>('[data-autofocus]')?.focus();
    }
    if (!props.open && element.open) element.close();
  }, [props.open]);
  return (
    <dialog
      ref={dialog}
      class={props.wide ? 'wide' : undefined}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        props.onClose();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** A modal confirmation of something that cannot be undone; focus starts on Cancel, so Enter does no harm. */
export function Confirm(props: {
  open: boolean;
  title: string;
  children?: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  busy?: boolean;
}) {
  const t = useT();
  return (
    <Modal open={props.open} title={props.title} onClose={props.onCancel}>
      {props.children}
      <div class="buttons">
        <button type="button" class="danger" disabled={props.busy} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" data-autofocus onClick={props.onCancel}>
          {t('cancel')}
        </button>
      </div>
    </Modal>
  );
}

export function Status({ text }: { text: string }) {
  return (
    <p class="status" role="status">
      {text}
    </p>
  );
}
