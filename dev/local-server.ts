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
  /**
   * From now on, answer each request only this many milliseconds after it came (0: at once), as a peer far away
   * would: its latency. With a bound (`limit`), after its turn came.
   */
  delay(ms: number): void;
  /**
   * From now on, take at most this many requests at once (Infinity: no bound); one beyond it waits, unanswered, until
   * one in hand is answered, as a real peer's connection limit makes it wait.
   */
  limit(requests: number): void;
  /** Requests taken and not yet answered now (those waiting beyond the bound not counted). */
  inFlight(): number;
  /** The most requests taken at once since the start (or since `resetPeak`). */
  peakInFlight(): number;
  resetPeak(): void;
  close(): Promise<void>;
}

/** A stand-in's pace: its latency and the requests it takes at once (see `LocalServer.delay`, `limit`). */
export interface Pace {
  latencyMs?: number;
  maxInFlight?: number;
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
  pace: Pace = {},
): Promise<LocalServer> {
  let failure: Failure | 'none' = 'none';
  let delayMs = pace.latencyMs ?? 0;
  let bound = pace.maxInFlight ?? Infinity;
  let inFlight = 0;
  let peakInFlight = 0;
  // Requests beyond the bound, in the order they came: each starts when one in hand is answered.
  const waiting: Array<() => void> = [];
  const admit = () => {
    while (inFlight < bound && waiting.length > 0) waiting.shift()?.();
  };
  const take = (start: () => void, response: http.ServerResponse) => {
    const begin = () => {
      inFlight += 1;
      peakInFlight = Math.max(peakInFlight, inFlight);
      let done = false;
      const finished = () => {
        if (done) return;
        done = true;
        inFlight -= 1;
        admit();
      };
      response.once('finish', finished);
      response.once('close', finished);
      start();
    };
    if (inFlight < bound && waiting.length === 0) begin();
    else {
      waiting.push(begin);
      // A caller that gave up while waiting leaves the queue.
      response.once('close', () => {
        const at = waiting.indexOf(begin);
        if (at >= 0) waiting.splice(at, 1);
      });
    }
  };
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
    request.on('end', () => take(() => (delayMs > 0 ? void setTimeout(answer, delayMs) : answer()), response));
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
    limit(requests) {
      bound = requests;
      admit();
    },
    inFlight: () => inFlight,
    peakInFlight: () => peakInFlight,
    resetPeak() {
      peakInFlight = inFlight;
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

/** `[latencyMs] [maxInFlight]` after the port, as the stand-ins take them when run alone. */
export function paceOfArguments(args: string[]): Pace {
  const [latency, bound] = args.map(Number);
  return {
    ...(latency !== undefined && Number.isFinite(latency) ? { latencyMs: latency } : {}),
    ...(bound !== undefined && Number.isFinite(bound) && bound > 0 ? { maxInFlight: bound } : {}),
  };
}
