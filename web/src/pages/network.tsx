import { useContext, useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client.js';
import { Field, FormProblem, Status, useAction, useLoad } from '../components/ui.js';
import { when } from '../format.js';
import { I18n, useT, type TextKey, type Translate } from '../i18n.js';

type NetworkError = NonNullable<Schemas['SmlState']['lastError']>;
type State = Schemas['SmlState']['state'] | Schemas['DirectoryState']['state'];

const STATE_TEXT: Record<NonNullable<State>, TextKey> = {
  registered: 'stateRegistered',
  pending: 'statePending',
  held_elsewhere: 'stateHeldElsewhere',
  refused: 'stateRefused',
  migrating_out: 'stateMigratingOut',
  pushed: 'statePushed',
  waiting_for_sml: 'stateWaitingForSml',
  set_aside: 'stateSetAside',
  no_process: 'stateNoProcess',
};

const HELD_UP: ReadonlySet<State> = new Set(['held_elsewhere', 'refused', 'set_aside']);

export const stateText = (state: State): TextKey => (state === null ? 'stateNone' : STATE_TEXT[state]);

/** A delivery target (`sml`, `directory`) by its name. */
export const targetName = (t: Translate, target: string) =>
  target === 'sml' || target === 'directory' ? t(target) : target;

/** The service's words for a peer it could not reach or that did not answer in time (src/http/peer-http.ts). */
const PEER_FAILURE = /^(SML|Directory) (could not be reached|did not answer whole)/;

/** A delivery's failure as the reader's language says it: a peer out of reach in words, any other (a refusal) as the peer said it. */
export function peerErrorWords(t: Translate, message: string): string {
  const [, target, failure] = PEER_FAILURE.exec(message) ?? [];
  if (!target) return message;
  return t(failure === 'did not answer whole' ? 'peerSlow' : 'peerUnreachable', {
    target: targetName(t, target === 'SML' ? 'sml' : 'directory'),
  });
}

/** The SML's refusal as the provider reads it: its message (which carries BDMSL's ERR code), a peer out of reach in words. */
export function NetworkErrorText({ error }: { error: NetworkError | null }) {
  const t = useT();
  return error ? <span class="failed">{peerErrorWords(t, error.message)}</span> : null;
}

/** Where one participant stands in the SML and the Peppol Directory (its network read operation), with its migrations. */
export function NetworkPlace({ identifier }: { identifier: string }) {
  const t = useT();
  const { language } = useContext(I18n);
  const network = useLoad(
    () => ok(api.GET('/rest/api/participants/{identifier}/network', { params: { path: { identifier } } })),
    [identifier],
  );
  const rows = network.data
    ? ([
        [t('sml'), network.data.sml],
        [t('directory'), network.data.directory],
      ] as const)
    : [];
  return (
    <section class="card" aria-labelledby="network-heading">
      <h2 id="network-heading">{t('network')}</h2>
      <p>{t('networkIntro')}</p>
      <FormProblem problem={network.problem} />
      <dl class="network">
        {rows.map(([target, place]) => (
          <div key={target}>
            <dt>{target}</dt>
            <dd>
              <strong class={HELD_UP.has(place.state) ? 'failed' : undefined}>{t(stateText(place.state))}</strong>
              {place.since ? (
                <>
                  {' '}
                  · {t('stateSince')} <time dateTime={place.since}>{when(place.since, language)}</time>
                </>
              ) : null}
              {place.nextAttemptAt ? (
                <>
                  {' '}
                  · {t('nextAttempt')} <time dateTime={place.nextAttemptAt}>{when(place.nextAttemptAt, language)}</time>
                </>
              ) : null}
              {place.lastError ? (
                <>
                  <br />
                  <NetworkErrorText error={place.lastError} />
                </>
              ) : null}
            </dd>
          </div>
        ))}
      </dl>
      {network.data ? (
        <Migration identifier={identifier} state={network.data.sml.state} onDone={network.reload} />
      ) : null}
    </section>
  );
}

/** Migration in (a key for an organization another SMP holds) and out (a key for the new provider, shown once; withdrawn). */
function Migration({
  identifier,
  state,
  onDone,
}: {
  identifier: string;
  state: Schemas['SmlState']['state'];
  onDone: () => void;
}) {
  const t = useT();
  const action = useAction();
  const [key, setKey] = useState('');
  const [given, setGiven] = useState('');
  const [notice, setNotice] = useState('');
  const path = { params: { path: { identifier } } };
  const done = (text: string) => () => {
    setNotice(text);
    onDone();
  };
  if (state === 'held_elsewhere' || state === 'refused') {
    const submit = (event: Event) => {
      event.preventDefault();
      void action.run(
        () =>
          ok(
            api.PUT('/rest/api/participants/{identifier}/migration-key', {
              ...path,
              body: { migrationKey: key.trim() },
            }),
          ),
        done(t('migrationKeySent')),
      );
    };
    return (
      <form class="inline" onSubmit={submit}>
        <Field
          label={t('migrationKey')}
          name="migrationKey"
          required
          maxLength={24}
          autoComplete="off"
          value={key}
          hint={t('migrationKeyHint')}
          onInput={(event) => setKey(event.currentTarget.value)}
          error={action.problem?.fields.migrationKey}
        />
        <button type="submit" disabled={action.busy}>
          {t('takeOver')}
        </button>
        {notice ? <Status text={notice} /> : null}
        <FormProblem problem={action.problem} shown={['migrationKey']} />
      </form>
    );
  }
  if (state !== 'registered' && state !== 'migrating_out') return notice ? <Status text={notice} /> : null;
  const giveKey = () =>
    action.run(
      async () =>
        setGiven((await ok(api.POST('/rest/api/participants/{identifier}/migration-out', path))).migrationKey),
      onDone,
    );
  const withdraw = () =>
    action.run(
      () => ok(api.DELETE('/rest/api/participants/{identifier}/migration-out', path)),
      () => {
        setGiven('');
        done(t('migrationKeyWithdrawn'))();
      },
    );
  return (
    <div class="buttons">
      <button type="button" onClick={giveKey} disabled={action.busy}>
        {t('giveMigrationKey')}
      </button>
      {state === 'migrating_out' ? (
        <button type="button" class="danger" onClick={withdraw} disabled={action.busy}>
          {t('withdrawMigrationKey')}
        </button>
      ) : null}
      {given ? (
        <p role="status">
          {t('migrationKeyGiven')} <code class="migration-key">{given}</code>
        </p>
      ) : null}
      {notice ? <Status text={notice} /> : null}
      <FormProblem problem={action.problem} />
    </div>
  );
}
