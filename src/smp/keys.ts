import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { exitOn } from '../core/errors.js';

/** The key the SMP signs with and the certificate it publishes in every signature. */
export interface SmpKey {
  privateKeyPem: string;
  certificatePem: string;
  /** Whether the key was generated for development (not a Peppol SMP certificate). */
  development: boolean;
}

export interface SmpKeySettings {
  DATABASE_URL?: string;
  REGISTRY_DATA_DIR: string;
  REGISTRY_SMP_KEY_FILE?: string;
  REGISTRY_SMP_CERTIFICATE_FILE?: string;
}

interface Log {
  info(message: string): void;
  warn(message: string): void;
}

export class SmpKeyError extends Error {}

export const HOW_TO_CONFIGURE = 'set REGISTRY_SMP_KEY_FILE and REGISTRY_SMP_CERTIFICATE_FILE to PEM files of the SMP '
  + 'signing key (unencrypted PKCS#8 or PKCS#1 RSA) and its certificate (the Peppol SMP certificate in production)';

const DEV_KEY = 'smp-development-key.pem';
const DEV_CERTIFICATE = 'smp-development-certificate.pem';

/**
 * The configured key; else, on the embedded database, a development key made once and kept in the data directory;
 * else (a PostgreSQL server without a configured key) none: the SMP publication then answers 503.
 */
export async function loadSmpKey(settings: SmpKeySettings, log: Log): Promise<SmpKey | undefined> {
  const { REGISTRY_SMP_KEY_FILE: keyFile, REGISTRY_SMP_CERTIFICATE_FILE: certificateFile } = settings;
  if (keyFile !== undefined || certificateFile !== undefined) {
    if (keyFile === undefined || certificateFile === undefined) throw new SmpKeyError(`SMP key: ${HOW_TO_CONFIGURE} (both, not one)`);
    return checkedKey(await readConfigured('REGISTRY_SMP_KEY_FILE', keyFile), await readConfigured('REGISTRY_SMP_CERTIFICATE_FILE', certificateFile), false);
  }
  if (settings.DATABASE_URL !== undefined) {
    log.warn(`SMP publication disabled (answers 503) until a signing key is configured: ${HOW_TO_CONFIGURE}`);
    return undefined;
  }
  const key = await developmentKey(settings.REGISTRY_DATA_DIR);
  log.warn(`SMP signing with a development key and self-signed certificate from ${settings.REGISTRY_DATA_DIR}: `
    + `NOT a Peppol SMP certificate, no network client will trust it; for production ${HOW_TO_CONFIGURE}`);
  return key;
}

/** A file the operator named, or an error that says which setting named it and why it cannot be read. */
async function readConfigured(setting: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new SmpKeyError(`SMP key: ${setting} names ${path}, which cannot be read (${reason})`);
  }
}

/** Ends the process with the message alone when the configured key or certificate cannot be used. */
export const exitOnSmpKeyError = exitOn(SmpKeyError);

async function developmentKey(dataDir: string): Promise<SmpKey> {
  const keyPath = join(dataDir, DEV_KEY);
  const certificatePath = join(dataDir, DEV_CERTIFICATE);
  if (!existsSync(keyPath) || !existsSync(certificatePath)) {
    const now = Date.now();
    const pems = await generate([{ name: 'commonName', value: 'registry development SMP (not a Peppol certificate)' }], {
      keySize: 2048, algorithm: 'sha256',
      notBeforeDate: new Date(now - 60_000), notAfterDate: new Date(now + 10 * 365 * 24 * 3600_000),
    });
    await mkdir(dataDir, { recursive: true });
    await writeFile(keyPath, pems.private, { mode: 0o600 });
    await writeFile(certificatePath, pems.cert);
  }
  return checkedKey(await readFile(keyPath, 'utf8'), await readFile(certificatePath, 'utf8'), true);
}

/** Parses both with Node's crypto and requires an RSA key that belongs to the certificate. */
export function checkedKey(privateKeyPem: string, certificatePem: string, development: boolean): SmpKey {
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certificatePem);
  } catch {
    throw new SmpKeyError('SMP certificate: not a PEM X.509 certificate');
  }
  let key;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch {
    throw new SmpKeyError('SMP key: not an unencrypted PEM private key');
  }
  if (key.asymmetricKeyType !== 'rsa') throw new SmpKeyError('SMP key: must be an RSA key (the signature is RSA-SHA256)');
  if (!certificate.checkPrivateKey(key)) throw new SmpKeyError('SMP key: does not belong to the SMP certificate');
  const pem = certificate.toString();
  return { privateKeyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string, certificatePem: pem, development };
}
