import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client.js';
import { FormProblem, Select, Status, useAction, useLoad } from '../components/ui.js';
import { useT } from '../i18n.js';

type Receiver = Schemas['MlsReceiver'];

/**
 * A service provider's Message Level Status address (`0242:<Main ID>`, from its access point's certificates) and whether
 * it is registered, with the one button that registers it; `onRegistered` hears of the participant it made. A provider
 * sees its own; with `authority`, the authority picks the provider (the API registers it for the provider named).
 */
export function MlsReceiverCard({
  authority = false,
  onRegistered,
}: {
  authority?: boolean;
  onRegistered: () => void;
}) {
  const t = useT();
  const receivers = useLoad(() => ok(api.GET('/rest/api/mls-receivers', {})), []);
  const action = useAction();
  const [notice, setNotice] = useState('');
  const [chosen, setChosen] = useState<string>();
  const receiver = receivers.data?.find((one) => one.serviceProvider.identifier === chosen) ?? receivers.data?.[0];
  const pending = receiver?.addresses.filter((address) => !address.receivesMls) ?? [];
  const body = authority && receiver ? { serviceProvider: { identifier: receiver.serviceProvider.identifier } } : {};
  const register = () =>
    action.run(
      () => ok(api.POST('/rest/api/mls-receivers', { body })),
      () => {
        setNotice(t('mlsDone', { address: pending.map((address) => address.qualifiedIdentifier).join(', ') }));
        receivers.reload();
        onRegistered();
      },
    );
  const choose = (identifier: string) => {
    setChosen(identifier);
    setNotice('');
    action.clear();
  };
  return (
    <section class="card" aria-labelledby="mls-heading">
      <h2 id="mls-heading">{t('mlsTitle')}</h2>
      <p>{t(authority ? 'mlsIntroAuthority' : 'mlsIntro')}</p>
      {authority && receivers.data && receivers.data.length > 0 ? (
        <Select
          label={t('resourceServiceProvider')}
          name="mlsProvider"
          initial={receiver?.serviceProvider.identifier}
          options={receivers.data.map(({ serviceProvider }) => [serviceProvider.identifier, serviceProvider.title])}
          onChange={(event) => choose(event.currentTarget.value)}
        />
      ) : null}
      {receiver ? <Addresses receiver={receiver} authority={authority} /> : null}
      {pending.length > 0 ? (
        <button type="button" class="primary" onClick={register} disabled={action.busy}>
          {t('mlsRegister')}
        </button>
      ) : null}
      {notice ? <Status text={notice} /> : null}
      <FormProblem problem={action.problem ?? receivers.problem} />
    </section>
  );
}

/** The receiver's addresses, each with whether statuses reach it; why it has none when its certificates carry no Seat ID. */
function Addresses({ receiver, authority }: { receiver: Receiver; authority: boolean }) {
  const t = useT();
  const provider = receiver.serviceProvider.title;
  if (receiver.addresses.length === 0) return <p>{authority ? t('mlsNoSeatOf', { provider }) : t('mlsNoSeat')}</p>;
  return (
    <>
      {receiver.addresses.map((address) => (
        <p key={address.qualifiedIdentifier} class="mls-address">
          {authority ? t('mlsAddressOf', { provider }) : t('mlsAddress')}: <code>{address.qualifiedIdentifier}</code> (
          {t('mlsSeat', { seat: address.seatId })}).{' '}
          {address.receivesMls
            ? t(authority ? 'mlsRegisteredOf' : 'mlsRegistered')
            : t(authority ? 'mlsNotRegisteredOf' : 'mlsNotRegistered')}
        </p>
      ))}
    </>
  );
}
