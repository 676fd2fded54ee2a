import { useContext, useState } from 'preact/hooks';
import { api, ok, page, type Schemas } from '../api/client.js';
import { when } from '../format.js';
import { DataTable, Field, FormProblem, Status, useAction, useLoad, type Column } from '../components/ui.js';
import { I18n, useT } from '../i18n.js';

type Lock = Schemas['SignInLock'];

/**
 * The sign-in locks in force (a username, or every one, refused from one address after too many failed password
 * checks), each lifted with one button: the ADMIN's, on the users page. The list is the API's, the same from every instance.
 */
export function SignInLocks() {
  const t = useT();
  const { language } = useContext(I18n);
  const [notice, setNotice] = useState('');
  const lift = useAction();
  const locks = useLoad(
    () => page(api.GET('/rest/api/sign-in-locks', { params: { query: { size: 100, sort: ['lockedUntil,desc'] } } })),
    [],
  );
  const whose = (lock: Lock) => lock.username ?? t('everyUsername');
  const columns: Column<Lock>[] = [
    { key: 'username', label: t('username'), render: (lock) => lock.username ?? <em>{t('everyUsername')}</em> },
    { key: 'clientAddress', label: t('clientAddress'), render: (lock) => <code class="id">{lock.clientAddress}</code> },
    {
      key: 'lockedUntil',
      label: t('lockedUntil'),
      render: (lock) => <time dateTime={lock.lockedUntil}>{when(lock.lockedUntil, language)}</time>,
    },
    {
      key: 'actions',
      label: t('actions'),
      render: (lock) => (
        <button
          type="button"
          aria-label={t('liftLockOf', { username: whose(lock), address: lock.clientAddress })}
          disabled={lift.busy}
          onClick={() =>
            lift.run(
              () =>
                ok(
                  api.DELETE('/rest/api/sign-in-locks/{identifier}', {
                    params: { path: { identifier: lock.identifier } },
                  }),
                ),
              () => {
                setNotice(
                  lock.username === null ? t('addressLockLifted') : t('lockLifted', { username: lock.username }),
                );
                locks.reload();
              },
            )
          }
        >
          {t('liftLock')}
        </button>
      ),
    },
  ];
  return (
    <section aria-labelledby="sign-in-locks">
      <h2 id="sign-in-locks">{t('signInLocks')}</h2>
      <p>{t('signInLocksIntro')}</p>
      {notice ? <Status text={notice} /> : null}
      <FormProblem problem={locks.problem ?? lift.problem} />
      <DataTable
        caption={t('signInLocks')}
        columns={columns}
        rows={locks.data?.content}
        loading={locks.loading}
        rowKey={(lock) => lock.identifier}
        placeholderRows={1}
      />
      <button
        type="button"
        onClick={() => {
          setNotice('');
          locks.reload();
        }}
      >
        {t('refresh')}
      </button>
    </section>
  );
}

/** The service's rule of a new password's length (src/users/password-rules.ts); the others it checks itself. */
const MIN_PASSWORD_LENGTH = 12;

/**
 * A user's change of its own password: the current one and the new one twice; the tab's session goes on, the
 * user's others end. The rules are shown as text, and what the console can check (length, the repeat) is said at
 * the field in words before anything is sent, rather than in the browser's bubble.
 */
export function ChangePassword() {
  const t = useT();
  const action = useAction();
  const [done, setDone] = useState(false);
  const [mistakes, setMistakes] = useState<Record<string, string>>({});
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const value = (name: string) => String(data.get(name) ?? '');
    const body: Schemas['PasswordChangeForm'] = {
      currentPassword: value('currentPassword'),
      newPassword: value('newPassword'),
    };
    setDone(false);
    const found = {
      ...(body.currentPassword === '' ? { currentPassword: t('plainRequired') } : {}),
      ...(body.newPassword.length < MIN_PASSWORD_LENGTH
        ? { newPassword: t('passwordTooShort', { count: body.newPassword.length }) }
        : {}),
      ...(value('repeatPassword') !== body.newPassword ? { repeatPassword: t('passwordsDiffer') } : {}),
    };
    setMistakes(found);
    if (Object.keys(found).length > 0) return undefined;
    return action.run(
      () => ok(api.PUT('/rest/api/users/me/password', { body })),
      () => {
        form.reset();
        setDone(true);
      },
    );
  };
  const error = (field: string) => mistakes[field] ?? action.problem?.fields[field];
  return (
    <section class="narrow">
      <h1>{t('changePassword')}</h1>
      <form id="password-form" onSubmit={submit} noValidate>
        <Field
          label={t('currentPassword')}
          name="currentPassword"
          type="password"
          autocomplete="current-password"
          required
          error={error('currentPassword')}
        />
        <Field
          label={t('newPassword')}
          name="newPassword"
          type="password"
          autocomplete="new-password"
          required
          hint={t('newPasswordHint')}
          error={error('newPassword')}
        />
        <Field
          label={t('repeatPassword')}
          name="repeatPassword"
          type="password"
          autocomplete="new-password"
          required
          error={error('repeatPassword')}
        />
        <FormProblem problem={action.problem} shown={['currentPassword', 'newPassword', 'repeatPassword']} />
        {done ? <Status text={t('passwordChanged')} /> : null}
        <button type="submit" class="primary" disabled={action.busy}>
          {action.busy ? t('working') : t('changePassword')}
        </button>
      </form>
    </section>
  );
}
