import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { CatalogueCache } from '../catalogue-cache/catalogue-cache.js';
import type { SmpKeys } from '../smp/keys.js';

const DAY_MS = 24 * 3600 * 1000;

/** What the registry shows of a certificate (Node's own X.509 parser reads it). */
export interface CertificateInfo {
  subject: string;
  issuer: string;
  serialNumber: string;
  notBefore: string;
  notAfter: string;
  /** Whole days until notAfter: 0 on its last day, negative once it has expired. */
  daysLeft: number;
}

/**
 * The use of a certificate the registry publishes or presents: the SMP's (signing and, unless a fixed one is set, the
 * SML and Directory client's), the next SMP certificate announced, a fixed SML/Directory client certificate
 * (SML_CLIENT_CERT_FILE), an access point endpoint's (published in the SMP answers).
 */
export type CertificateUse = 'smp' | 'smp_next' | 'client' | 'access_point';

export interface WatchedCertificate extends CertificateInfo {
  use: CertificateUse;
  /** Days until notAfter with their fraction, for the metrics. */
  daysLeftExactly: number;
  /** The SMP's development key: not a Peppol certificate. */
  development?: boolean;
  /** smp: who issued it, as far as the network's clients are concerned (`smpIssuer`). */
  issuedBy?: SmpIssuer;
  /** smp_next: the instant it takes over. */
  from?: string;
  /** access_point: which access point and endpoint publish it. */
  accessPoint?: { identifier: string; title: string };
  endpoint?: string;
  /** The instant it stops being used (the SMP certificate at a rollover); its expiry matters only before. */
  usedUntil?: number;
}

/** The one-line name of an X.509 name (`CN=x, O=y`). */
const oneLine = (name: string) => name.split('\n').join(', ');

/** A PEM or DER certificate as the registry shows it, at `now`. */
export function certificateInfo(
  certificate: string | Buffer,
  now: number,
): CertificateInfo & { daysLeftExactly: number } {
  const parsed = new X509Certificate(certificate);
  const notAfter = parsed.validToDate.getTime();
  const daysLeftExactly = (notAfter - now) / DAY_MS;
  return {
    subject: oneLine(parsed.subject),
    issuer: oneLine(parsed.issuer),
    serialNumber: parsed.serialNumber,
    notBefore: parsed.validFromDate.toISOString(),
    notAfter: parsed.validToDate.toISOString(),
    daysLeft: Math.floor(daysLeftExactly),
    daysLeftExactly,
  };
}

/**
 * The fixed SML and Directory client certificate (SML_CLIENT_CERT_FILE), read once at the start as the clients read
 * it; undefined when none is set, or when the file holds no certificate (the clients' TLS then says so at each call).
 */
export function fixedClientCertificate(tls: { clientCertificateFile?: string } | undefined): string | undefined {
  if (!tls?.clientCertificateFile) return undefined;
  try {
    const pem = readFileSync(tls.clientCertificateFile, 'utf8');
    new X509Certificate(pem);
    return pem;
  } catch {
    return undefined;
  }
}

export interface CertificateSources {
  /** The SMP's pairs; none when the SMP publication is disabled. */
  keys?: SmpKeys;
  /** A fixed SML and Directory client certificate (PEM), read at the start. */
  clientCertificate?: string;
  catalogue: CatalogueCache;
}

/**
 * Who issued an SMP certificate: OpenPEPPOL's SMP CA (production or test, any generation: `CN=PEPPOL SERVICE METADATA
 * PUBLISHER [TEST ]CA[ - Gn]`, `O=OpenPEPPOL[ AISBL]`), the certificate itself, or another CA. By the issuer's name
 * only: the registry holds no Peppol root to verify the chain with (the SML and every client do); this catches a
 * certificate configured by mistake, not one forged to carry the name.
 */
export type SmpIssuer = 'development' | 'self_signed' | 'other_ca' | 'peppol_smp_ca';

const PEPPOL_SMP_CA = /^CN=PEPPOL SERVICE METADATA PUBLISHER (TEST )?CA( - G\d+)?$/im;
const OPENPEPPOL = /^O=OpenPEPPOL( AISBL)?$/im;

export function smpIssuer(certificate: string | Buffer): Exclude<SmpIssuer, 'development'> {
  const parsed = new X509Certificate(certificate);
  // Its own name as issuer, signed by its own key (a leaf without keyCertSign too, which checkIssued would not count).
  if (parsed.subject === parsed.issuer && parsed.verify(parsed.publicKey)) return 'self_signed';
  return PEPPOL_SMP_CA.test(parsed.issuer) && OPENPEPPOL.test(parsed.issuer) ? 'peppol_smp_ca' : 'other_ca';
}

/** The SMP certificate in use now and, before its instant, the next one. */
function smpCertificates(keys: SmpKeys, now: number): WatchedCertificate[] {
  const { key, until } = keys.inUse();
  const inUse: WatchedCertificate = {
    use: 'smp',
    ...certificateInfo(key.certificatePem, now),
    ...(key.development ? { development: true } : {}),
    issuedBy: key.development ? 'development' : smpIssuer(key.certificatePem),
    ...(Number.isFinite(until) ? { usedUntil: until } : {}),
  };
  const next =
    keys.next && now < keys.next.from
      ? [
          {
            use: 'smp_next' as const,
            ...certificateInfo(keys.next.key.certificatePem, now),
            from: new Date(keys.next.from).toISOString(),
          },
        ]
      : [];
  return [inUse, ...next];
}

/** A stored certificate (base64 DER) as the registry shows it; none for one Node cannot read (stored before the checks). */
function storedCertificateInfo(base64Der: string, now: number): ReturnType<typeof certificateInfo> | undefined {
  try {
    return certificateInfo(Buffer.from(base64Der, 'base64'), now);
  } catch {
    return undefined;
  }
}

/** Every access point endpoint's certificate, as the catalogue holds them. */
async function accessPointCertificates(catalogue: CatalogueCache, now: number): Promise<WatchedCertificate[]> {
  const accessPoints = (await catalogue.rows('access-point')).rows;
  return accessPoints.flatMap((accessPoint) =>
    accessPoint.endpoints.flatMap((endpoint) => {
      const info = endpoint.certificate === undefined ? undefined : storedCertificateInfo(endpoint.certificate, now);
      return info
        ? [
            {
              use: 'access_point' as const,
              ...info,
              accessPoint: { identifier: accessPoint.identifier, title: accessPoint.title },
              endpoint: endpoint.url,
            },
          ]
        : [];
    }),
  );
}

/** Every certificate the registry publishes or presents now, with its days left. */
export async function watchedCertificates(
  sources: CertificateSources,
  now = Date.now(),
): Promise<WatchedCertificate[]> {
  return [
    ...(sources.keys ? smpCertificates(sources.keys, now) : []),
    ...(sources.clientCertificate
      ? [{ use: 'client' as const, ...certificateInfo(sources.clientCertificate, now) }]
      : []),
    ...(await accessPointCertificates(sources.catalogue, now)),
  ];
}

/** Those that expire within `days` (or have expired) while still in use, soonest first. */
export function expiringWithin(certificates: readonly WatchedCertificate[], days: number): WatchedCertificate[] {
  return certificates
    .filter(
      (certificate) =>
        certificate.daysLeftExactly <= days && Date.parse(certificate.notAfter) <= (certificate.usedUntil ?? Infinity),
    )
    .sort((a, b) => a.daysLeftExactly - b.daysLeftExactly);
}
