import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';

const DAY = 24 * 60 * 60 * 1000;

/** A self-signed certificate and its RSA key of `keySize` bits, valid from `from` until `until` (PEM). */
export async function testCertificate(
  commonName: string,
  from = new Date(Date.now() - DAY),
  until = new Date(Date.now() + 365 * DAY),
  keySize = 2048,
) {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keySize,
    algorithm: 'sha256',
    notBeforeDate: from,
    notAfterDate: until,
  });
  return { cert: pems.cert, key: pems.private };
}

/** The base64 DER inside a PEM certificate, as the SMP publishes it. */
export function base64Der(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
}

export const expiredCertificate = (commonName: string) =>
  testCertificate(commonName, new Date(Date.now() - 400 * DAY), new Date(Date.now() - DAY));

const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });

/** A self-signed certificate (a CA: its own trust anchor) valid for a day, and its key: `{name}.pem`, `{name}.key` in `dir`. */
export function testSelfSigned(dir: string, name: string, subject: string): void {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    subject,
    '-keyout',
    join(dir, `${name}.key`),
    '-out',
    join(dir, `${name}.pem`),
  );
}

/**
 * A test CA (`ca.pem`), a server certificate for 127.0.0.1 (`server.pem`, `server.key`) and a client certificate per
 * name (`{name}.pem`, `{name}.key`), all valid for a day, made in `dir` by the openssl CLI.
 */
export function testPki(dir: string, clients: readonly string[]): void {
  const file = (name: string) => join(dir, name);
  testSelfSigned(dir, 'ca', '/CN=Test CA');
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  const certificates: Array<[string, string, string[]]> = [
    ['server', '/CN=127.0.0.1', ['-extfile', file('server.ext')]],
    ...clients.map((name): [string, string, string[]] => [name, `/CN=SMP ${name}`, []]),
  ];
  for (const [name, subject, extensions] of certificates) {
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      subject,
      '-keyout',
      file(`${name}.key`),
      '-out',
      file(`${name}.csr`),
    );
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '1',
      '-out',
      file(`${name}.pem`),
      ...extensions,
    );
  }
}
