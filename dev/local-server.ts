import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** How a local stand-in for a network service misbehaves, for tests of delivery under failure. */
type Failure = 'none' | 'fault' | 'timeout' | 'refuse';

export interface LocalServer {
  url: string;
  /** The SHA-256 fingerprint of the client certificate each request came with, in order (undefined: none). */
  clientCertificates: Array<string | undefined>;
  /** From now on: answer normally, answer with the service's fault, never answer, or cut every connection. */
  fail(failure: Failure): void;
  /** From now on, answer each request only this many milliseconds after it came (0: at once). */
  delay(ms: number): void;
  close(): Promise<void>;
}

/** PEM of the server's certificate and key, and of the CA its clients' certificates must be signed by. */
export interface LocalTls {
  cert: string;
  key: string;
  ca: string;
}

/**
 * A server on loopback for a local SML or Directory: `handle` answers a request with its body read, `fault`
 * answers it while failing with faults. Plain HTTP, or with `tls` HTTPS that requires a client certificate
 * signed by `tls.ca` (the SML's mutual TLS).
 */
export async function startLocalServer(
  port: number,
  handle: (request: http.IncomingMessage, body: string, response: http.ServerResponse) => void,
  fault: (response: http.ServerResponse) => void,
  tls?: LocalTls,
): Promise<LocalServer> {
  let failure: Failure = 'none';
  let delayMs = 0;
  const hung = new Set<http.ServerResponse>();
  const clientCertificates: Array<string | undefined> = [];
  const listener: http.RequestListener = (request, response) => {
    clientCertificates.push(clientCertificateOf(request));
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    const answer = () => {
      if (failure === 'refuse') return void request.socket.destroy();
      if (failure === 'timeout') return void hung.add(response);
      if (failure === 'fault') return fault(response);
      handle(request, Buffer.concat(chunks).toString('utf8'), response);
    };
    request.on('end', () => (delayMs > 0 ? void setTimeout(answer, delayMs) : answer()));
  };
  const server = tls
    ? https.createServer({ ...tls, requestCert: true, rejectUnauthorized: true }, listener)
    : http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const releaseHung = () => {
    for (const response of hung) response.destroy();
    hung.clear();
  };
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    clientCertificates,
    fail(next) {
      failure = next;
      if (next !== 'timeout') releaseHung();
    },
    delay(ms) {
      delayMs = ms;
    },
    async close() {
      releaseHung();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The SHA-256 fingerprint of the client certificate the request came with; undefined over plain HTTP. */
export function clientCertificateOf(request: http.IncomingMessage): string | undefined {
  const raw = (request.socket as Partial<TLSSocket>).getPeerCertificate?.().raw;
  return raw ? new X509Certificate(raw).fingerprint256 : undefined;
}
