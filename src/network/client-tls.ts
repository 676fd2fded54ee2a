import { readFileSync } from 'node:fs';
import { readPrivateKeyFile } from '../core/private-key-file.js';

/** A client certificate and its key (PEM) for mutual TLS. */
export interface ClientCertificate {
  cert: string | Buffer;
  key: string | Buffer;
}

/** How the SML and Directory clients present themselves, and whom they trust. */
export interface ClientTlsOptions {
  /** PEM files of a fixed client certificate and its key. */
  clientCertificateFile?: string;
  clientKeyFile?: string;
  /** Without the files: the client certificate in use at the time of each call (the SMP's pair, which rolls over). */
  clientCertificate?: () => ClientCertificate;
  /** PEM file of the CA certificates the server's certificate must chain to, in place of Node's public roots. */
  caFile?: string;
}

/**
 * The TLS options of a request made now. Files are read once, at the start; the pair of the moment is asked for at
 * every call. Node's agent keeps connections apart by certificate, so none made with the previous pair is reused.
 */
export function clientTls(options: ClientTlsOptions): () => Partial<ClientCertificate> & { ca?: Buffer } {
  const ca = options.caFile === undefined ? {} : { ca: readFileSync(options.caFile) };
  if (options.clientCertificateFile && options.clientKeyFile) {
    const fixed = {
      cert: readFileSync(options.clientCertificateFile),
      key: readPrivateKeyFile('SML_CLIENT_KEY_FILE', options.clientKeyFile),
      ...ca,
    };
    return () => fixed;
  }
  const inUse = options.clientCertificate;
  return inUse ? () => ({ ...inUse(), ...ca }) : () => ca;
}
