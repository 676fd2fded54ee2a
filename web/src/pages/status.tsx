import type { ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import { api, ok, page, type Schemas } from '../api/client.js';
import { DataTable, FormProblem, useLoad } from '../components/ui.js';
import { age, when } from '../format.js';
import { I18n, useT, type TextKey, type Translate } from '../i18n.js';
import { href } from '../router.js';
import { useDeliveryColumns } from './changes.js';
import { peerErrorWords, targetName } from './network.js';

type Status = Schemas['Status'];
type Expiring = Schemas['ExpiringCertificate'];
type Count = Schemas['Count'];

/** One thing the authority should look at: a problem (something fails now) or a warning (something will), and where to act. */
interface Attention {
  key: string;
  severity: 'problem' | 'warning';
  text: string;
  /** A console page where it is acted on. */
  act?: { page: string; label: TextKey };
}

/**
 * A kind of what needs attention, read from the status. Each is a hook (it may use the texts, or load what it needs
 * beyond the status, such as the lock-outs of users): a new kind is one more function in ATTENTION.
 */
type AttentionBlock = (status: Status) => Attention[];

/** A delivery whose oldest change waits longer than this is held up, even without a failure. */
const HELD_UP_AFTER_SECONDS = 300;

/** Deliveries that fail or are held up, and organizations the SML would not take. */
function useDeliveriesHeldUp(status: Status): Attention[] {
  const t = useT();
  const act = { page: 'deliveries', label: 'deliveries' } as const;
  const deliveries = status.deliveries.flatMap((delivery): Attention[] => {
    const target = targetName(t, delivery.target);
    if (delivery.attempts > 0) {
      return [
        {
          key: `delivery-${delivery.target}`,
          severity: 'problem',
          act,
          text: t('attentionDeliveryFailing', {
            target,
            attempts: delivery.attempts,
            error: peerErrorWords(t, delivery.lastError ?? ''),
          }),
        },
      ];
    }
    if (delivery.setAside > 0) {
      return [
        {
          key: `delivery-${delivery.target}`,
          severity: 'warning',
          act,
          text: t('attentionSetAside', { target, count: delivery.setAside }),
        },
      ];
    }
    if (delivery.pending > 0 && delivery.oldestPendingSeconds > HELD_UP_AFTER_SECONDS) {
      return [
        {
          key: `delivery-${delivery.target}`,
          severity: 'warning',
          act,
          text: t('attentionDeliveryWaiting', {
            target,
            pending: delivery.pending,
            age: age(delivery.oldestPendingSeconds),
          }),
        },
      ];
    }
    return [];
  });
  const sml = status.counts.sml;
  const heldUp =
    sml && sml.held_elsewhere.count + sml.refused.count > 0
      ? [
          {
            key: 'held-up',
            severity: 'warning' as const,
            act,
            text: t('attentionHeldUp', { heldElsewhere: sml.held_elsewhere.count, refused: sml.refused.count }),
          },
        ]
      : [];
  return [...deliveries, ...heldUp];
}

/** No signing key, or one no network client trusts: the development key, a self-signed one, one of another CA than Peppol's SMP CA. */
function signingAttention(t: Translate, certificate: Status['smp']['certificate']): Attention[] {
  if (certificate === null) return [{ key: 'smp-none', severity: 'problem', text: t('attentionNoSmpKey') }];
  const text = {
    development: t('attentionDevelopmentKey'),
    self_signed: t('certificateSelfSigned', { subject: certificate.subject }),
    other_ca: t('certificateNotPeppol', { issuer: certificate.issuer }),
    peppol_smp_ca: undefined,
  }[certificate.issuedBy];
  return text ? [{ key: 'smp-untrusted', severity: 'warning', text }] : [];
}

/** A signing key missing or not trusted, and every certificate in use that expires soon or has expired. */
function useCertificatesExpiring(status: Status): Attention[] {
  const t = useT();
  const { language } = useContext(I18n);
  const signing = signingAttention(t, status.smp.certificate);
  const expiring = status.expiringCertificates.map((certificate: Expiring): Attention => {
    const named = t(`certificateUse_${certificate.use}`, {
      accessPoint: certificate.accessPoint?.title ?? '',
      endpoint: certificate.endpoint ?? '',
    });
    const date = when(certificate.notAfter, language);
    return {
      key: `certificate-${certificate.use}-${certificate.endpoint ?? ''}-${certificate.serialNumber}`,
      severity: certificate.daysLeft < 0 ? 'problem' : 'warning',
      text:
        certificate.daysLeft < 0
          ? t('certificateExpiredOn', { certificate: named, date })
          : t('certificateExpiresIn', { certificate: named, date, days: certificate.daysLeft }),
      ...(certificate.use === 'access_point' ? { act: { page: 'access-points', label: 'accessPoints' } as const } : {}),
    };
  });
  return [...signing, ...expiring];
}

/** Usernames refused at an address after too many wrong passwords (read again with the status): the ADMIN lifts them on the users page. */
function useLockedUsers(status: Status): Attention[] {
  const t = useT();
  const locks = useLoad(() => page(api.GET('/rest/api/sign-in-locks', { params: { query: { size: 1 } } })), [status]);
  const count = locks.data?.totalElements ?? 0;
  return count === 0 ? [] : [{ key: 'sign-in-locks', severity: 'warning', text: t('attentionLockedUsers', { count }) }];
}

const ATTENTION: readonly AttentionBlock[] = [useDeliveriesHeldUp, useCertificatesExpiring, useLockedUsers];

/** Problems first, then warnings; each says what, and links to where it is acted on. */
function NeedsAttention({ status }: { status: Status }) {
  const t = useT();
  const items = ATTENTION.flatMap((block) => block(status)).sort((a, b) =>
    a.severity === b.severity ? 0 : a.severity === 'problem' ? -1 : 1,
  );
  return (
    <section class="card status-card" aria-labelledby="attention-heading">
      <h2 id="attention-heading">{t('needsAttention')}</h2>
      {items.length === 0 ? (
        <p class="ok">{t('nothingNeedsAttention')}</p>
      ) : (
        <ul class="attention">
          {items.map((item) => (
            <li key={item.key} class={item.severity}>
              <strong>{t(item.severity === 'problem' ? 'attentionProblem' : 'attentionWarning')}:</strong> {item.text}
              {item.act ? (
                <>
                  {' '}
                  <a href={href(item.act.page)}>{t(item.act.label)}</a>
                </>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** A term and what it is, in a card's list. */
function Entry({ term, children }: { term: string; children: ComponentChildren }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function Certificate({
  certificate,
}: {
  certificate: { subject: string; issuer: string; notAfter: string; daysLeft: number };
}) {
  const t = useT();
  const { language } = useContext(I18n);
  return (
    <>
      {t('certificateLine', {
        subject: certificate.subject,
        issuer: certificate.issuer,
        date: when(certificate.notAfter, language),
        days: certificate.daysLeft,
      })}
    </>
  );
}

function TheRegistry({ status }: { status: Status }) {
  const t = useT();
  const { language } = useContext(I18n);
  const { database } = status;
  return (
    <section class="card status-card" aria-labelledby="registry-heading">
      <h2 id="registry-heading">{t('theRegistry')}</h2>
      <dl class="facts">
        <Entry term={t('version')}>
          {status.version}
          {status.commit ? (
            <>
              {' '}
              · {t('commit')} <code>{status.commit.slice(0, 12)}</code>
            </>
          ) : null}
          {' · '}
          {status.builtAt ? (
            <>
              {t('builtAt')} <time dateTime={status.builtAt}>{when(status.builtAt, language)}</time>
            </>
          ) : (
            t('runsFromSources')
          )}
        </Entry>
        <Entry term={t('started')}>
          <time dateTime={status.startedAt}>{when(status.startedAt, language)}</time> ·{' '}
          {t('uptime', { age: age(status.uptimeSeconds) })}
        </Entry>
        <Entry term={t('database')}>
          {t(database.kind === 'postgres' ? 'databasePostgres' : 'databaseEmbedded')} · {t('migration')}{' '}
          <code>{database.migration ?? '–'}</code>
          {database.migration !== database.migrationOfThisVersion ? (
            <> ({t('migrationOther', { migration: database.migrationOfThisVersion })})</>
          ) : null}
        </Entry>
        <Entry term={t('smpCertificate')}>
          {status.smp.certificate ? (
            <>
              <Certificate certificate={status.smp.certificate} />
              {status.smp.certificate.development ? ` · ${t('developmentCertificate')}` : ''}
            </>
          ) : (
            <span class="failed">{t('noSmpCertificate')}</span>
          )}
        </Entry>
        {status.smp.next ? (
          <Entry term={t('nextSmpCertificate')}>
            <Certificate certificate={status.smp.next} /> ·{' '}
            {t('takesOverAt', { instant: when(status.smp.next.from, language) })}
          </Entry>
        ) : null}
        <Entry term={t('publicUrl')}>
          {status.smp.publicUrl ? <code>{status.smp.publicUrl}</code> : t('publicUrlNone')}
        </Entry>
      </dl>
    </section>
  );
}

function TheNetwork({ status }: { status: Status }) {
  const t = useT();
  const columns = useDeliveryColumns();
  return (
    <section class="card status-card" aria-labelledby="network-configuration-heading">
      <h2 id="network-configuration-heading">{t('networkConfiguration')}</h2>
      <dl class="facts">
        <Entry term={t('sml')}>
          {status.sml ? (
            <>
              <code>{status.sml.url}</code> · {t('smpId')} <code>{status.sml.smpId}</code>
              {status.sml.caPinned ? ` · ${t('caPinned')}` : ''}
            </>
          ) : (
            t('notConfigured')
          )}
        </Entry>
        <Entry term={t('directory')}>
          {status.directory ? <code>{status.directory.url}</code> : t('notConfigured')}
        </Entry>
        <Entry term={t('clientCertificate')}>
          {status.clientCertificate ? (
            <Certificate certificate={status.clientCertificate} />
          ) : (
            t('clientCertificateIsSmp')
          )}
        </Entry>
      </dl>
      {status.deliveries.length > 0 ? (
        <DataTable
          caption={t('deliveries')}
          columns={columns}
          rows={status.deliveries}
          loading={false}
          rowKey={(delivery) => delivery.target}
        />
      ) : (
        <p class="status">{t('noDeliveries')}</p>
      )}
    </section>
  );
}

function Counts({ status }: { status: Status }) {
  const t = useT();
  const { language } = useContext(I18n);
  const number = (value: number) => value.toLocaleString(language === 'nb' ? 'nb-NO' : 'en-GB');
  const counted = (count: Count) => (count.exact ? number(count.count) : t('about', { count: number(count.count) }));
  const { counts } = status;
  return (
    <section class="card status-card" aria-labelledby="counts-heading">
      <h2 id="counts-heading">{t('countsTitle')}</h2>
      <dl class="facts">
        <Entry term={t('serviceProviders')}>{number(counts.serviceProviders)}</Entry>
        <Entry term={t('accessPointProviders')}>{number(counts.accessPointProviders)}</Entry>
        <Entry term={t('accessPoints')}>{number(counts.accessPoints)}</Entry>
        <Entry term={t('participants')}>{counted(counts.participants)}</Entry>
        {counts.sml ? (
          <Entry term={t('organizationsInSml')}>
            {t('stateRegistered')} {counted(counts.sml.registered)} · {t('stateHeldElsewhere')}{' '}
            {counted(counts.sml.held_elsewhere)}
            {' · '}
            {t('stateRefused')} {counted(counts.sml.refused)} · {t('stateMigratingOut')}{' '}
            {counted(counts.sml.migrating_out)}
          </Entry>
        ) : null}
        {counts.directory ? (
          <Entry term={t('organizationsInDirectory')}>{counted(counts.directory.pushed)}</Entry>
        ) : null}
      </dl>
      <p class="hint">{t('countsNote')}</p>
    </section>
  );
}

/** The authority's landing page: what needs attention first, then the status it comes from. */
export function StatusPage() {
  const t = useT();
  const status = useLoad(() => ok(api.GET('/rest/api/status')), []);
  return (
    <section>
      <div class="heading">
        <h1>{t('statusPage')}</h1>
        <button type="button" onClick={status.reload} disabled={status.loading}>
          {t('refresh')}
        </button>
      </div>
      <p>{t('statusIntro')}</p>
      <FormProblem problem={status.problem} />
      {status.data ? (
        <div aria-busy={status.loading}>
          <NeedsAttention status={status.data} />
          <TheRegistry status={status.data} />
          <TheNetwork status={status.data} />
          <Counts status={status.data} />
        </div>
      ) : (
        <p class="status" role="status">
          {t('loading')}
        </p>
      )}
    </section>
  );
}
