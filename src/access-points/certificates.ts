import { X509Certificate } from 'node:crypto';

export type CertificateCheck =
  { ok: true; base64Der: string; validTo: Date } | { ok: false; code: 'Certificate' | 'Expired'; message: string };

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Reads an access point certificate given as PEM or as base64 DER (whitespace ignored) with Node's own X.509
 * parser, and refuses one that has expired at `now`. The stored and published form is base64 DER.
 */
export function checkCertificate(text: string, now = new Date()): CertificateCheck {
  const pem = PEM_BLOCK.exec(text);
  const base64 = (pem ? (pem[1] as string) : text).replace(/\s+/g, '');
  if (!BASE64.test(base64))
    return { ok: false, code: 'Certificate', message: 'not a PEM or base64 DER X.509 certificate' };
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(Buffer.from(base64, 'base64'));
  } catch {
    return { ok: false, code: 'Certificate', message: 'not a PEM or base64 DER X.509 certificate' };
  }
  const validTo = new Date(certificate.validTo);
  if (validTo.getTime() <= now.getTime()) {
    return { ok: false, code: 'Expired', message: `the certificate expired on ${validTo.toISOString()}` };
  }
  return { ok: true, base64Der: certificate.raw.toString('base64'), validTo };
}

/** A Peppol Seat ID, as the CN of an access point certificate's subject carries it: `P`, two letters, six digits. */
const SEAT_ID = /^P[A-Z]{2}[0-9]{6}$/;

/**
 * The Peppol Seat ID of an access point certificate (base64 DER, as stored): the CN of its subject when it is one, as
 * Node's X.509 parser reads the subject (one `name=value` per line); undefined for any other certificate.
 */
export function seatIdOf(base64Der: string): string | undefined {
  let subject: string;
  try {
    subject = new X509Certificate(Buffer.from(base64Der, 'base64')).subject;
  } catch {
    return undefined;
  }
  return subject
    .split('\n')
    .map((line) => (line.startsWith('CN=') ? line.slice(3) : ''))
    .find((name) => SEAT_ID.test(name));
}
