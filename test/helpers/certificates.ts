import { generate } from 'selfsigned';

const DAY = 24 * 60 * 60 * 1000;

/** A self-signed certificate and its key, valid from `from` until `until` (PEM). */
export async function testCertificate(commonName: string, from = new Date(Date.now() - DAY), until = new Date(Date.now() + 365 * DAY)) {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keySize: 2048, algorithm: 'sha256', notBeforeDate: from, notAfterDate: until,
  });
  return { cert: pems.cert, key: pems.private };
}

/** The base64 DER inside a PEM certificate, as the SMP publishes it. */
export function base64Der(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}

export const expiredCertificate = (commonName: string) =>
  testCertificate(commonName, new Date(Date.now() - 400 * DAY), new Date(Date.now() - DAY));
