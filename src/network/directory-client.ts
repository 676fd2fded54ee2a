import { clientTls, type ClientTlsOptions } from './client-tls.js';
import { callPeer, type PeerBounds } from '../http/peer-http.js';

export interface DirectoryOptions extends ClientTlsOptions, PeerBounds {
  /** The Peppol Directory's base URL; `{url}/indexer/1.0/` is its indexer. */
  url: string;
}

/**
 * A Directory answer that is not success. `status` is the HTTP status of an answer; `final` a refusal no retry can
 * cure (a 4xx other than 408 and 429: the Directory refuses this participant, and would the next time).
 */
export class DirectoryError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }

  get final(): boolean {
    return (
      this.status !== undefined && this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429
    );
  }
}

/** A call that did not reach an answer: a failed connection, a timeout, an answer too large (`detail`: for the log, as the SML's). */
class DirectoryCallError extends DirectoryError {
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(`Directory ${message}`);
  }
}

export interface DirectoryClient {
  /** Asks the Directory to (re)index the participant: `PUT /indexer/1.0/` with the id as the body. */
  put(participant: string): Promise<void>;
  /** `DELETE /indexer/1.0/{id}`; one the Directory does not know (404) counts as deleted. */
  delete(participant: string): Promise<void>;
}

export function directoryClient(options: DirectoryOptions): DirectoryClient {
  const base = `${options.url.replace(/\/$/, '')}/indexer/1.0/`;
  const tls = clientTls(options);
  const send = async (method: string, url: string, body?: string) => {
    const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'text/plain; charset=utf-8' };
    return (await callPeer(new URL(url), { method, headers, body, tls: tls() }, options, DirectoryCallError)).status;
  };
  return {
    async put(participant) {
      const status = await send('PUT', base, participant);
      if (status >= 300) throw new DirectoryError(`Directory answered HTTP ${status} to PUT ${participant}`, status);
    },
    async delete(participant) {
      const status = await send('DELETE', `${base}${encodeURIComponent(participant)}`);
      if (status >= 300 && status !== 404)
        throw new DirectoryError(`Directory answered HTTP ${status} to DELETE ${participant}`, status);
    },
  };
}
