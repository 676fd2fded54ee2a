import { useState } from 'preact/hooks';
import type { Problem } from '../api/client.js';
import { Field, FormProblem, problemFrom } from '../components/ui.js';
import { useT } from '../i18n.js';
import { signIn, type Session } from '../session.js';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const t = useT();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      onSignedIn(await signIn(username, password));
    } catch (error) {
      setProblem(problemFrom(error));
      setBusy(false);
    }
  };
  return (
    <section class="narrow">
      <h1>{t('signIn')}</h1>
      <form onSubmit={submit}>
        <Field
          label={t('username')}
          name="username"
          autocomplete="username"
          required
          value={username}
          onInput={(event) => setUsername(event.currentTarget.value)}
        />
        <Field
          label={t('password')}
          name="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(event) => setPassword(event.currentTarget.value)}
          hint={t('signInHint')}
        />
        <FormProblem problem={problem} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? t('working') : t('signIn')}
        </button>
      </form>
    </section>
  );
}
