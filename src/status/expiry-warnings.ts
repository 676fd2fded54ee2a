import type { FastifyBaseLogger } from 'fastify';
import { counted } from '../core/plural.js';
import {
  expiringWithin,
  watchedCertificates,
  type CertificateSources,
  type WatchedCertificate,
} from './certificates.js';

const DAY_MS = 24 * 3600 * 1000;

const USES: Record<WatchedCertificate['use'], string> = {
  smp: 'SMP certificate',
  smp_next: 'next SMP certificate',
  client: 'SML and Directory client certificate',
  access_point: 'access point certificate',
};

/** The log line's words: which certificate, and when it expires or expired. */
function warningOf(certificate: WatchedCertificate): string {
  const where = certificate.endpoint ? ` of ${certificate.accessPoint?.title} (${certificate.endpoint})` : '';
  const when =
    certificate.daysLeftExactly < 0
      ? `expired on ${certificate.notAfter}`
      : `expires on ${certificate.notAfter}, in ${counted(certificate.daysLeft, 'day')}`;
  return `the ${USES[certificate.use]}${where} ${when}: ${certificate.subject}`;
}

/**
 * A warning line per certificate the registry publishes or presents that expires within `days` (or has expired), at
 * the start and every day after, so that an operator who reads only the log learns it in time.
 */
export function expiryWarnings(sources: CertificateSources, days: number, log: FastifyBaseLogger, everyMs = DAY_MS) {
  let timer: NodeJS.Timeout | undefined;
  const warn = async () => {
    for (const certificate of expiringWithin(await watchedCertificates(sources), days)) {
      const { use, subject, issuer, serialNumber, notAfter, daysLeft, accessPoint, endpoint } = certificate;
      log.warn(
        { certificate: { use, subject, issuer, serialNumber, notAfter, daysLeft, accessPoint, endpoint } },
        warningOf(certificate),
      );
    }
  };
  const warnOrSay = () =>
    warn().catch((error: unknown) =>
      log.error({ err: error }, "the certificates' expiry could not be checked; checked again tomorrow"),
    );
  return {
    start() {
      void warnOrSay();
      timer = setInterval(warnOrSay, everyMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
