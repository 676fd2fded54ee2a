import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, ok, page, type Problem } from '../../api/client.js';
import type { paths } from '../../api/schema.js';
import {
  Confirm,
  DataTable,
  Field,
  fieldMessages,
  FormProblem,
  Modal,
  Pager,
  problemFrom,
  Status,
  useAction,
  useLoad,
  type Column,
} from '../../components/ui.js';
import { useT, type TextKey, type Translate } from '../../i18n.js';

/** A collection path whose items are at `{path}/{identifier}`, read one by one: the path of a resource the authority manages. */
type ManagedPath = {
  [P in keyof paths]: `${P}/{identifier}` extends keyof paths
    ? paths[`${P}/{identifier}`] extends { get: { responses: { 200: unknown } } }
      ? P
      : never
    : never;
}[keyof paths];
type ItemOf<P extends ManagedPath> = paths[`${P}/{identifier}` & keyof paths];
/** What a request or response carries as JSON (each media type of an operation carries the same schema). */
type Json<Message> = Message extends { content: infer Media } ? Media[keyof Media] : never;
type Row<P extends ManagedPath> = Json<ItemOf<P>['get']['responses'][200]>;
type AddForm<P extends ManagedPath> = Json<paths[P]['post']['requestBody']>;
type UpdateForm<P extends ManagedPath> = Json<ItemOf<P>['put']['requestBody']>;

interface Identified {
  identifier: string;
}

interface Page<T> {
  content: T[];
  totalPages: number;
  totalElements: number;
}

type FieldError = (field: string) => string | undefined;

/**
 * One kind of resource the authority manages: its path in the API (find and add on it, get, update and delete on
 * `{path}/{identifier}`), its table, and the fields of its form (the same fields add one and, filled with its
 * values, edit one in place): rows of type `T`, added with an `Add` and updated with an `Update` body.
 */
interface ResourceKind<T, Add, Update> {
  path: ManagedPath;
  /** The form's id prefix: `{name}-form` adds, `{name}-edit-form` edits. */
  name: string;
  title: TextKey;
  addTitle: TextKey;
  columns: (t: Translate) => Column<T>[];
  label: (row: T) => string;
  /** The API searches this kind: the search field's text is sent as `query`. */
  searchable?: boolean;
  /** The order of the listed rows, as the API's `sort`; else the API's own. */
  sort?: string[];
  /** The request body from the form; `current` is the resource being edited. */
  body: (form: HTMLFormElement, current: T | undefined) => Add;
  /** The update's body, where it differs from the add's. */
  updateBody?: (body: Add) => Update;
  Fields: (props: { current: T | undefined; error: FieldError }) => ComponentChildren;
  /** The API's field names the fields show messages for, each with what is within it (the rest show above the button). */
  shown: string[];
}

/** Declares a kind: its rows and bodies are the API's own types of its `path`. */
export const resourceKind = <P extends ManagedPath>(
  kind: ResourceKind<Row<P>, AddForm<P>, UpdateForm<P>> & { path: P },
) => kind;

type Query = Record<string, string | number | string[] | undefined>;
type Answer<T = unknown> = Promise<{ data?: T; error?: unknown; response: Response }>;

/**
 * The calls on a managed path. openapi-fetch checks a call only on a literal path; for the engine's path, a type
 * parameter, `resourceKind` is what ties the rows and bodies to the API's types of that path.
 */
const managedApi = api as unknown as {
  GET<T>(path: string, init: { params: { query?: Query; path?: Identified } }): Answer<T>;
  POST(path: string, init: { body: unknown }): Answer;
  PUT(path: string, init: { params: { path: Identified }; body: unknown }): Answer;
  DELETE(path: string, init: { params: { path: Identified } }): Answer;
};

const itemPath = (path: ManagedPath) => `${path}/{identifier}`;
const byId = (identifier: string) => ({ params: { path: { identifier } } });

function find<T>(path: ManagedPath, query: Query): Promise<Page<T>> {
  return page(managedApi.GET<Page<T>>(path, { params: { query } }));
}

/** Every row of a kind (up to the API's largest page), for the choices of a form. */
export function useAll<T, Add, Update>(kind: ResourceKind<T, Add, Update>): T[] {
  const rows = useLoad(() => find<T>(kind.path, { size: 2000 }), []);
  return rows.data?.content ?? [];
}

/** A form field's text, trimmed. */
export const text = (form: HTMLFormElement, name: string) => String(new FormData(form).get(name) ?? '').trim();
/** The first message among `fields`: a field that the API may name in several ways. */
export const firstError = (error: FieldError, ...fields: string[]) => fields.map(error).find(Boolean);

/** A paged table of one resource with edit (in a dialog) and delete (confirmed) per row, and an add form. */
export function ResourcePage<T extends Identified, Add, Update>({
  kind,
  nested,
}: {
  kind: ResourceKind<T, Add, Update>;
  nested?: boolean;
}) {
  const t = useT();
  const [query, setQuery] = useState('');
  const [pageNumber, setPage] = useState(0);
  const [size, setSize] = useState(30);
  const [editing, setEditing] = useState<T | null>(null);
  const [deleting, setDeleting] = useState<T | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [editProblem, setEditProblem] = useState<Problem | null>(null);
  const [notice, setNotice] = useState('');
  // The add form is made as it opens: its choices (another kind's rows, such as the document types) are read then.
  const [adding, setAdding] = useState(false);
  const search = query.trim();
  const list = useLoad(
    () =>
      find<T>(kind.path, {
        ...(kind.searchable ? { query: search || undefined } : {}),
        page: pageNumber,
        size,
        sort: kind.sort,
      }),
    [pageNumber, size, query],
  );
  const Heading = nested ? 'h2' : 'h1';
  const columns: Column<T>[] = [
    ...kind.columns(t),
    {
      key: 'actions',
      label: t('actions'),
      render: (row) => (
        <div class="row-actions">
          <button type="button" aria-label={`${t('edit')} ${kind.label(row)}`} onClick={() => void edit(row)}>
            {t('edit')}
          </button>
          <button
            type="button"
            class="danger"
            aria-label={`${t('delete')} ${kind.label(row)}`}
            onClick={() => {
              setNotice('');
              setDeleting(row);
            }}
          >
            {t('delete')}
          </button>
        </div>
      ),
    },
  ];
  const saved = () => {
    setNotice(t('saved'));
    list.reload();
  };
  // Edited as it is now, not as the row was listed: another list of the page (a process added with a document type)
  // may have changed it since, and a form of the listed state would save that change away.
  const edit = async (row: T) => {
    setNotice('');
    setEditProblem(null);
    try {
      setEditing(await ok(managedApi.GET<T>(itemPath(kind.path), byId(row.identifier))));
    } catch (error) {
      const problem = problemFrom(error);
      setEditProblem(problem.status === 404 ? { ...problem, message: t('gone', { name: kind.label(row) }) } : problem);
    }
  };
  const remove = async () => {
    if (!deleting) return;
    try {
      await ok(managedApi.DELETE(itemPath(kind.path), byId(deleting.identifier)));
      setDeleting(null);
      setProblem(null);
      setNotice(t('deleted'));
      list.reload();
    } catch (error) {
      const problem = problemFrom(error);
      setProblem(problem.status === 404 ? { ...problem, message: t('gone', { name: kind.label(deleting) }) } : problem);
    }
  };
  return (
    <section>
      <Heading>{t(kind.title)}</Heading>
      {kind.searchable ? (
        <form class="inline" role="search" aria-label={t(kind.title)} onSubmit={(event) => event.preventDefault()}>
          <Field
            label={t('search')}
            name="query"
            type="search"
            value={query}
            onInput={(event) => {
              setQuery(event.currentTarget.value);
              setPage(0);
              setNotice('');
            }}
          />
        </form>
      ) : null}
      {notice ? <Status text={notice} /> : null}
      <FormProblem problem={editProblem ?? list.problem} />
      <DataTable
        caption={t(kind.title)}
        columns={columns}
        rows={list.data?.content}
        loading={list.loading}
        rowKey={(row) => row.identifier}
        placeholderRows={3}
      />
      <Pager
        page={pageNumber}
        size={size}
        totalPages={list.data?.totalPages}
        totalElements={list.data?.totalElements}
        onPage={(value) => {
          setPage(value);
          setNotice('');
        }}
        onSize={(value) => {
          setSize(value);
          setPage(0);
        }}
      />
      <details
        class="card"
        onToggle={(event) => {
          setNotice('');
          setAdding(event.currentTarget.open);
        }}
      >
        <summary>{t(kind.addTitle)}</summary>
        {adding ? <ResourceForm kind={kind} done={saved} /> : null}
      </details>
      <Modal
        open={editing !== null}
        wide
        title={`${t('edit')}: ${editing ? kind.label(editing) : ''}`}
        onClose={() => setEditing(null)}
      >
        {editing ? (
          <ResourceForm
            key={editing.identifier}
            kind={kind}
            current={editing}
            done={() => {
              setEditing(null);
              saved();
            }}
            cancel={() => setEditing(null)}
          />
        ) : null}
      </Modal>
      <Confirm
        open={deleting !== null}
        title={t('delete')}
        confirmLabel={t('delete')}
        onConfirm={remove}
        onCancel={() => {
          setDeleting(null);
          setProblem(null);
        }}
      >
        <p>{t('confirmDelete', { name: deleting ? kind.label(deleting) : '' })}</p>
        <FormProblem problem={problem} />
      </Confirm>
    </section>
  );
}

/** Adds a resource (POST), or with `current` updates it (PUT); the API's messages show at their fields. */
function ResourceForm<T extends Identified, Add, Update>(props: {
  kind: ResourceKind<T, Add, Update>;
  current?: T;
  done: () => void;
  cancel?: () => void;
}) {
  const { kind, current } = props;
  const t = useT();
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const body = kind.body(form, current);
    const save = () =>
      current
        ? ok(
            managedApi.PUT(itemPath(kind.path), {
              ...byId(current.identifier),
              body: kind.updateBody ? kind.updateBody(body) : body,
            }),
          )
        : ok(managedApi.POST(kind.path, { body }));
    return action.run(save, () => {
      if (!current) form.reset();
      props.done();
    });
  };
  const error: FieldError = fieldMessages(action.problem, kind.shown);
  const Fields = kind.Fields;
  return (
    <form id={`${kind.name}-${current ? 'edit-' : ''}form`} onSubmit={submit} onInput={action.forget}>
      <Fields current={current} error={error} />
      <FormProblem problem={action.problem} shown={kind.shown} />
      <div class="buttons">
        <button type="submit" class="primary" disabled={action.busy}>
          {action.busy ? t('working') : current ? t('save') : t('add')}
        </button>
        {props.cancel ? (
          <button type="button" onClick={props.cancel}>
            {t('cancel')}
          </button>
        ) : null}
      </div>
    </form>
  );
}
