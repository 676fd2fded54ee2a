import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorCodeOf } from '../core/errors.js';
import { KeyFileError, readPrivateKeyFile } from '../core/private-key-file.js';

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
  REGISTRY_SMP_NEXT_KEY_FILE?: string;
  REGISTRY_SMP_NEXT_CERTIFICATE_FILE?: string;
  REGISTRY_SMP_NEXT_CERTIFICATE_FROM?: string;
  /** A fixed SML client certificate, which a rollover could not switch. */
  SML_CLIENT_CERT_FILE?: string;
}

/** The next pair and the instant (ms since the epoch) from which it replaces the current one. */
export interface NextSmpKey {
  key: SmpKey;
  from: number;
}

/**
 * The SMP's pair, and the next one from its instant (a certificate rollover): what signs the SMP answers and what the
 * SML and the Directory see as the client certificate. Every instance reads the same settings, so each switches at the
 * same instant by its own clock.
 */
export class SmpKeys {
  constructor(
    readonly current: SmpKey,
    readonly next?: NextSmpKey,
    /** The time now; a test moves it to cross the instant. */
    readonly clock: () => number = Date.now,
  ) {}

  /** The pair in use now, and the instant it stops being used (Infinity when none follows). */
  inUse(): { key: SmpKey; until: number } {
    if (!this.next) return { key: this.current, until: Infinity };
    return this.clock() < this.next.from
      ? { key: this.current, until: this.next.from }
      : { key: this.next.key, until: Infinity };
  }

  /** The pair in use as a TLS client certificate. */
  clientCertificate(): { cert: string; key: string } {
    const { key } = this.inUse();
    return { cert: key.certificatePem, key: key.privateKeyPem };
  }
}

/**
 * How the SML and Directory clients present themselves (Peppol: the SMP certificate is their client certificate): the
 * pair in use at each call, never a development pair; unless files name another (`SML_CLIENT_*`, which win).
 */
export function networkClientCertificate(keys: SmpKeys | undefined): {
  clientCertificate?: () => { cert: string; key: string };
} {
  return keys && !keys.current.development ? { clientCertificate: () => keys.clientCertificate() } : {};
}

interface Log {
  info(message: string): void;
  warn(message: string): void;
}

export class SmpKeyError extends Error {}

export const HOW_TO_CONFIGURE =
  'set REGISTRY_SMP_KEY_FILE and REGISTRY_SMP_CERTIFICATE_FILE to PEM files of the SMP ' +
  'signing key (unencrypted PKCS#8 or PKCS#1 RSA) and its certificate (the Peppol SMP certificate in production)';

const DEV_KEY = 'smp-development-key.pem';
const DEV_CERTIFICATE = 'smp-development-certificate.pem';

/**
 * The configured key; else, on the embedded database, a development key made once and kept in the data directory;
 * else (a PostgreSQL server without a configured key) none: the SMP publication then answers 503.
 */
export async function loadSmpKey(settings: SmpKeySettings, log: Log): Promise<SmpKey | undefined> {
  const { REGISTRY_SMP_KEY_FILE: keyFile, REGISTRY_SMP_CERTIFICATE_FILE: certificateFile } = settings;
  if (keyFile !== undefined || certificateFile !== undefined) {
    if (keyFile === undefined || certificateFile === undefined)
      throw new SmpKeyError(`SMP key: ${HOW_TO_CONFIGURE} (both, not one)`);
    const key = await configuredPair(
      'REGISTRY_SMP_KEY_FILE',
      keyFile,
      'REGISTRY_SMP_CERTIFICATE_FILE',
      certificateFile,
    );
    log.info(`SMP signing with ${certificateFile} (${describeCertificate(key.certificatePem)})`);
    return key;
  }
  if (settings.DATABASE_URL !== undefined) {
    log.warn(`SMP publication disabled (answers 503) until a signing key is configured: ${HOW_TO_CONFIGURE}`);
    return undefined;
  }
  const key = await developmentKey(settings.REGISTRY_DATA_DIR);
  log.warn(
    `SMP signing with a development key and self-signed certificate from ${settings.REGISTRY_DATA_DIR}: ` +
      `NOT a Peppol SMP certificate, no network client will trust it; for production ${HOW_TO_CONFIGURE}`,
  );
  return key;
}

const NEXT_SETTINGS = [
  'REGISTRY_SMP_NEXT_KEY_FILE',
  'REGISTRY_SMP_NEXT_CERTIFICATE_FILE',
  'REGISTRY_SMP_NEXT_CERTIFICATE_FROM',
] as const;
/** An ISO 8601 instant with its offset: every instance must read the same instant, whatever its time zone. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The key as loadSmpKey finds it, with the next pair when one is configured. The start refuses a next pair that is
 * incomplete, without a configured current pair, whose key does not belong to its certificate, or whose certificate
 * is not valid at the instant; and a fixed SML client certificate beside it (the SML expects the new one then).
 */
export async function loadSmpKeys(
  settings: SmpKeySettings,
  log: Log,
  clock: () => number = Date.now,
): Promise<SmpKeys | undefined> {
  const next = await loadNextSmpKey(settings);
  // Before loadSmpKey, which would make a development key where none is configured.
  if (next && (settings.REGISTRY_SMP_KEY_FILE === undefined || settings.REGISTRY_SMP_CERTIFICATE_FILE === undefined)) {
    throw new SmpKeyError(
      'SMP key: a next pair (REGISTRY_SMP_NEXT_...) replaces a configured one: set REGISTRY_SMP_KEY_FILE and REGISTRY_SMP_CERTIFICATE_FILE too',
    );
  }
  const current = await loadSmpKey(settings, log);
  if (!current || !next) return current && new SmpKeys(current, undefined, clock);
  if (settings.SML_CLIENT_CERT_FILE !== undefined) {
    throw new SmpKeyError(
      'SMP key: SML_CLIENT_CERT_FILE would stay the SML client certificate after REGISTRY_SMP_NEXT_CERTIFICATE_FROM, when the SML ' +
        "expects the next one: unset SML_CLIENT_CERT_FILE and SML_CLIENT_KEY_FILE (the SML and Directory clients then use the SMP's pair)",
    );
  }
  const remaining = next.from - clock();
  log.info(
    remaining > 0
      ? `SMP certificate rollover at ${new Date(next.from).toISOString()}: the next pair signs and is the SML client certificate from then`
      : `SMP certificate rollover at ${new Date(next.from).toISOString()} has taken place: the next pair is in use`,
  );
  return new SmpKeys(current, next, clock);
}

async function loadNextSmpKey(settings: SmpKeySettings): Promise<NextSmpKey | undefined> {
  const given = NEXT_SETTINGS.filter((name) => settings[name] !== undefined);
  if (given.length === 0) return undefined;
  const {
    REGISTRY_SMP_NEXT_KEY_FILE: keyFile,
    REGISTRY_SMP_NEXT_CERTIFICATE_FILE: certificateFile,
    REGISTRY_SMP_NEXT_CERTIFICATE_FROM: instant,
  } = settings;
  if (keyFile === undefined || certificateFile === undefined || instant === undefined) {
    throw new SmpKeyError(
      `SMP key: the next pair needs ${NEXT_SETTINGS.join(', ')} (all three, not ${given.join(', ')} alone)`,
    );
  }
  const from = Date.parse(instant);
  if (!INSTANT.test(instant) || Number.isNaN(from)) {
    throw new SmpKeyError(
      `SMP key: REGISTRY_SMP_NEXT_CERTIFICATE_FROM must be an ISO 8601 instant with its offset (2026-03-19T00:00:00Z), not '${instant}'`,
    );
  }
  let key: SmpKey;
  try {
    key = await configuredPair(
      'REGISTRY_SMP_NEXT_KEY_FILE',
      keyFile,
      'REGISTRY_SMP_NEXT_CERTIFICATE_FILE',
      certificateFile,
    );
  } catch (error) {
    throw error instanceof SmpKeyError ? new SmpKeyError(`next ${error.message}`) : error;
  }
  const certificate = new X509Certificate(key.certificatePem);
  if (from < Date.parse(certificate.validFrom) || from >= Date.parse(certificate.validTo)) {
    throw new SmpKeyError(
      `next SMP certificate: not valid at REGISTRY_SMP_NEXT_CERTIFICATE_FROM ${instant} (valid from ${certificate.validFrom} to ${certificate.validTo})`,
    );
  }
  return { key, from };
}

/** A file the operator named, or an error that says which setting named it and why it cannot be read. */
async function readConfigured(setting: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const reason = errorCodeOf(error) ?? 'unreadable';
    throw new SmpKeyError(`SMP key: ${setting} names ${path}, which cannot be read (${reason})`);
  }
}

/**
 * The pair two settings name. Files given the wrong way round are said to be swapped before anything else: the key
 * file's mode check would otherwise ask the operator to protect a certificate.
 */
async function configuredPair(
  keySetting: string,
  keyFile: string,
  certificateSetting: string,
  certificateFile: string,
): Promise<SmpKey> {
  const certificateText = await readConfigured(certificateSetting, certificateFile);
  if (holdsPrivateKey(certificateText)) {
    const swapped = holdsCertificate(await readConfigured(keySetting, keyFile));
    throw new SmpKeyError(
      swapped
        ? `SMP key: ${keySetting} and ${certificateSetting} look swapped: ${keyFile} holds a certificate and ${certificateFile} a private key`
        : `SMP key: ${certificateSetting} names ${certificateFile}, which holds a private key, not a certificate`,
    );
  }
  return checkedKey(readConfiguredKey(keySetting, keyFile), certificateText, false);
}

/** Whether Node's crypto reads a private key, or a certificate, in the text. */
function holdsPrivateKey(text: string): boolean {
  try {
    createPrivateKey(text);
    return true;
  } catch {
    return false;
  }
}

function holdsCertificate(text: string): boolean {
  try {
    new X509Certificate(text);
    return true;
  } catch {
    return false;
  }
}

/** The certificate in use, as an operator compares it with what the CA issued. */
export function describeCertificate(certificatePem: string): string {
  const certificate = new X509Certificate(certificatePem);
  const oneLine = (name: string) => name.split('\n').join(', ');
  return `subject ${oneLine(certificate.subject)}, issuer ${oneLine(certificate.issuer)}, serial ${certificate.serialNumber}, valid until ${new Date(certificate.validTo).toISOString()}`;
}

/** A private key file the operator named, refused unless it is its owner's only (see readPrivateKeyFile). */
function readConfiguredKey(setting: string, path: string): string {
  try {
    return readPrivateKeyFile(setting, path).toString('utf8');
  } catch (error) {
    throw error instanceof KeyFileError ? new SmpKeyError(`SMP key: ${error.message}`) : error;
  }
}

/** Made once, its owner's only (also one an older version left with wider modes): nobody else may sign with it. */
async function developmentKey(dataDir: string): Promise<SmpKey> {
  const keyPath = join(dataDir, DEV_KEY);
  const certificatePath = join(dataDir, DEV_CERTIFICATE);
  if (!existsSync(keyPath) || !existsSync(certificatePath)) {
    const now = Date.now();
    // Loaded here only: a development key is made once, and the generator's module graph costs every start a few hundred ms.
    const { generate } = await import('selfsigned');
    const pems = await generate(
      [{ name: 'commonName', value: 'registry development SMP (not a Peppol certificate)' }],
      {
        keySize: 2048,
        algorithm: 'sha256',
        notBeforeDate: new Date(now - 60_000),
        notAfterDate: new Date(now + 10 * 365 * 24 * 3600_000),
      },
    );
    await mkdir(dataDir, { recursive: true });
    await writeFile(keyPath, pems.private, { mode: 0o600 });
    await writeFile(certificatePath, pems.cert);
  }
  await chmod(keyPath, 0o600);
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
  if (key.asymmetricKeyType !== 'rsa')
    throw new SmpKeyError('SMP key: must be an RSA key (the signature is RSA-SHA256)');
  if (!certificate.checkPrivateKey(key)) throw new SmpKeyError('SMP key: does not belong to the SMP certificate');
  const pem = certificate.toString();
  return { privateKeyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string, certificatePem: pem, development };
}
