import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import { FormProblem, Status, useAction, useLoad } from '../components/ui.js';
import { useT } from '../i18n.js';

/**
 * The provider's Message Level Status address (`0242:<Main ID>`, from its access point's certificates) and whether it is
 * registered, with the one button that registers it; `onRegistered` hears of the participant it made.
 */
export function MlsReceiverCard({ onRegistered }: { onRegistered: () => void }) {
  const t = useT();
  const receivers = useLoad(() => ok(api.GET('/rest/api/mls-receivers', {})), []);
  const action = useAction();
  const [notice, setNotice] = useState('');
  const receiver = receivers.data?.[0];
  const pending = receiver?.addresses.filter((address) => !address.receivesMls) ?? [];
  const register = () => action.run(() => ok(api.POST('/rest/api/mls-receivers', { body: {} })), () => {
    setNotice(t('mlsDone', { address: pending.map((address) => address.qualifiedIdentifier).join(', ') }));
    receivers.reload();
    onRegistered();
  });
  return (
    <section class="card" aria-labelledby="mls-heading">
      <h2 id="mls-heading">{t('mlsTitle')}</h2>
      <p>{t('mlsIntro')}</p>
      {receiver && receiver.addresses.length === 0 ? <p>{t('mlsNoSeat')}</p> : null}
      {receiver?.addresses.map((address) => (
        <p key={address.qualifiedIdentifier} class="mls-address">
          {t('mlsAddress')}: <code>{address.qualifiedIdentifier}</code> ({t('mlsSeat', { seat: address.seatId })}).{' '}
          {address.receivesMls ? t('mlsRegistered') : t('mlsNotRegistered')}
        </p>
      ))}
      {pending.length > 0 ? <button type="button" class="primary" onClick={register} disabled={action.busy}>{t('mlsRegister')}</button> : null}
      {notice ? <Status text={notice} /> : null}
      <FormProblem problem={action.problem ?? receivers.problem} />
    </section>
  );
}
