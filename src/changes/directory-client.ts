import http from 'node:http';
import https from 'node:https';
import { clientTls, type ClientTlsOptions } from './client-tls.js';

export interface DirectoryOptions extends ClientTlsOptions {
  /** The Peppol Directory's base URL; `{url}/indexer/1.0/` is its indexer. */
  url: string;
  timeoutMs?: number;
}

class DirectoryError extends Error {}

export interface DirectoryClient {
  /** Asks the Directory to (re)index the participant: `PUT /indexer/1.0/` with the id as the body. */
  put(participant: string): Promise<void>;
  /** `DELETE /indexer/1.0/{id}`; one the Directory does not know (404) counts as deleted. */
  delete(participant: string): Promise<void>;
}

export function directoryClient(options: DirectoryOptions): DirectoryClient {
  const base = `${options.url.replace(/\/$/, '')}/indexer/1.0/`;
  const tls = clientTls(options);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const send = (method: string, url: string, body?: string) => new Promise<number>((resolve, reject) => {
    const target = new URL(url);
    const request = (target.protocol === 'https:' ? https : http).request(target, {
      method, headers: body === undefined ? {} : { 'content-type': 'text/plain; charset=utf-8' }, ...tls(),
    }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.setTimeout(timeoutMs, () => request.destroy(new DirectoryError(`Directory did not answer within ${timeoutMs} ms`)));
    request.on('error', (error) => reject(error instanceof DirectoryError ? error : new DirectoryError(`Directory: ${error.message}`)));
    request.end(body);
  });
  return {
    async put(participant) {
      const status = await send('PUT', base, participant);
      if (status >= 300) throw new DirectoryError(`Directory answered HTTP ${status} to PUT ${participant}`);
    },
    async delete(participant) {
      const status = await send('DELETE', `${base}${encodeURIComponent(participant)}`);
      if (status >= 300 && status !== 404) throw new DirectoryError(`Directory answered HTTP ${status} to DELETE ${participant}`);
    },
  };
}
