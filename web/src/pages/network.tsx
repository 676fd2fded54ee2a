import { useContext } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client.js';
import { FormProblem, useLoad } from '../components/ui.js';
import { when } from '../format.js';
import { I18n, useT, type TextKey } from '../i18n.js';

type NetworkError = NonNullable<Schemas['SmlState']['lastError']>;
type State = Schemas['SmlState']['state'] | Schemas['DirectoryState']['state'];

const STATE_TEXT: Record<NonNullable<State>, TextKey> = {
  registered: 'stateRegistered', pending: 'statePending', held_elsewhere: 'stateHeldElsewhere', refused: 'stateRefused',
  pushed: 'statePushed', waiting_for_sml: 'stateWaitingForSml',
};

const HELD_UP: ReadonlySet<State> = new Set(['held_elsewhere', 'refused']);

export const stateText = (state: State): TextKey => (state === null ? 'stateNone' : STATE_TEXT[state]);

/** The SML's refusal as the provider reads it: its code and message. */
export function NetworkErrorText({ error }: { error: NetworkError | null }) {
  if (!error) return null;
  return <span class="failed">{error.code ? <code>{error.code}</code> : null} {error.message}</span>;
}

/** Where one participant stands in the SML and the Peppol Directory (its network read operation). */
export function NetworkPlace({ identifier }: { identifier: string }) {
  const t = useT();
  const { language } = useContext(I18n);
  const network = useLoad(() => ok(api.GET('/rest/api/participants/{identifier}/network', { params: { path: { identifier } } })), [identifier]);
  const rows = network.data ? [[t('sml'), network.data.sml], [t('directory'), network.data.directory]] as const : [];
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
              {place.since ? <> · {t('stateSince')} <time dateTime={place.since}>{when(place.since, language)}</time></> : null}
              {place.lastError ? <><br /><NetworkErrorText error={place.lastError} /></> : null}
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
