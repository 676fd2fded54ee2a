import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

/**
 * How a local stand-in for a network service misbehaves, for tests of delivery under failure: answer with the
 * service's fault, never answer, cut the connection, answer a byte a second, or answer more than 12 MB.
 */
export type Failure = 'fault' | 'timeout' | 'refuse' | 'trickle' | 'huge';

/** The size of a `huge` answer. */
export const HUGE_ANSWER_BYTES = 12 * 1024 * 1024;

export interface LocalServer {
  url: string;
  /** The SHA-256 fingerprint of the client certificate each request came with, in order (undefined: none). */
  clientCertificates: Array<string | undefined>;
  /** From now on: answer normally ('none') or misbehave as `failure` says for every request. */
  fail(failure: Failure | 'none'): void;
  /** From now on, answer each request only this many milliseconds after it came (0: at once). */
  delay(ms: number): void;
  close(): Promise<void>;
}

/** Misbehaves for one request as `failure` says. */
export type Misbehave = (failure: Failure) => void;

/** PEM of the server's certificate and key, and of the CA its clients' certificates must be signed by. */
export interface LocalTls {
  cert: string;
  key: string;
  ca: string;
}

/**
 * A server on loopback for a local SML or Directory: `handle` answers a request with its body read (and may
 * misbehave for that one request), `fault` answers it while failing with faults. Plain HTTP, or with `tls` HTTPS
 * that requires a client certificate signed by `tls.ca` (the SML's mutual TLS).
 */
export async function startLocalServer(
  port: number,
  handle: (request: http.IncomingMessage, body: string, response: http.ServerResponse, misbehave: Misbehave) => void,
  fault: (response: http.ServerResponse) => void,
  tls?: LocalTls,
): Promise<LocalServer> {
  let failure: Failure | 'none' = 'none';
  let delayMs = 0;
  const hung = new Set<http.ServerResponse>();
  const clientCertificates: Array<string | undefined> = [];
  const misbehaving =
    (request: http.IncomingMessage, response: http.ServerResponse): Misbehave =>
    (how) => {
      if (how === 'refuse') return void request.socket.destroy();
      if (how === 'fault') return fault(response);
      hung.add(response);
      response.once('close', () => hung.delete(response));
      if (how === 'trickle') {
        response.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' });
        const drip = setInterval(() => response.write(' '), 1000);
        response.once('close', () => clearInterval(drip));
      }
      if (how === 'huge')
        response.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' }).end(' '.repeat(HUGE_ANSWER_BYTES));
    };
  const listener: http.RequestListener = (request, response) => {
    clientCertificates.push(clientCertificateOf(request));
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    const answer = () => {
      const misbehave = misbehaving(request, response);
      if (failure !== 'none') return misbehave(failure);
      handle(request, Buffer.concat(chunks).toString('utf8'), response, misbehave);
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
      if (next === 'none') releaseHung();
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
