import http from 'node:http';
import https from 'node:https';

/** How long a call to a peer (the SML, the Directory) may take in all, and how many bytes its answer may carry. */
export interface PeerBounds {
  /** From the request's start to the answer's last byte, whatever arrives meanwhile (a trickle too). Default 10 s. */
  timeoutMs?: number;
  /** The answer's body; a larger one (declared or sent) ends the call. Default 1 MiB. */
  maxAnswerBytes?: number;
}

export const DEFAULT_PEER_TIMEOUT_MS = 10_000;
export const DEFAULT_PEER_ANSWER_MAX_BYTES = 1024 * 1024;

export interface PeerRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  tls: object;
}

/**
 * Why a connection to a peer failed, in words that name no address: the peer's failure is stored and shown to
 * providers (a participant's place in the network), while the socket's own message (`connect ECONNREFUSED
 * 10.0.0.5:8091`) is the failure's `detail`, for the log only.
 */
function unreachableWords(error: NodeJS.ErrnoException): string {
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED') return 'could not be reached (the connection was refused)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'could not be reached (its host name is not known)';
  if (/^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code))
    return 'could not be reached securely (the TLS connection was refused)';
  return 'could not be reached (the connection failed)';
}

/** A peer call's failure: `message` in words, `detail` the socket's own message when there is one (for the log). */
export type PeerFailure = new (message: string, detail?: string) => Error;

/**
 * One HTTP call to a peer, bounded in total time and in answer bytes: a peer that answers slowly, trickles, or
 * sends more than `maxAnswerBytes` ends the call with a `Failure`, as does a connection that fails. The answer is
 * read whole (within the bound) before anything parses it.
 */
export function callPeer(
  url: URL,
  request: PeerRequest,
  bounds: PeerBounds,
  Failure: PeerFailure,
): Promise<{ status: number; body: string }> {
  const timeoutMs = bounds.timeoutMs ?? DEFAULT_PEER_TIMEOUT_MS;
  const maxBytes = bounds.maxAnswerBytes ?? DEFAULT_PEER_ANSWER_MAX_BYTES;
  return new Promise((resolve, reject) => {
    // The first reason wins: the error events that follow a destroy say less.
    const fail = (error: Error) => {
      clearTimeout(deadline);
      const ours: boolean = error instanceof Failure;
      reject(ours ? error : new Failure(unreachableWords(error), error.message));
      outgoing.destroy();
    };
    const outgoing = (url.protocol === 'https:' ? https : http).request(
      url,
      { method: request.method, headers: request.headers, ...request.tls },
      (response) => {
        const tooLarge = () => fail(new Failure(`answered more than ${maxBytes} bytes`));
        if (Number(response.headers['content-length'] ?? 0) > maxBytes) return tooLarge();
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) return tooLarge();
          chunks.push(chunk);
        });
        response.on('end', () => {
          clearTimeout(deadline);
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', fail);
      },
    );
    const deadline = setTimeout(() => fail(new Failure(`did not answer whole within ${timeoutMs} ms`)), timeoutMs);
    outgoing.on('error', fail);
    outgoing.end(request.body);
  });
}
