import { request } from 'node:http';
import type { Dataset } from './dataset.js';
import { PARTICIPANT_SCHEME } from './keys.js';
import { streamRequest } from './scenarios.js';
import { sampleRss, type RunningProcess } from './service.js';

export interface StreamRun {
  ms: number;
  bytes: number;
  /** Occurrences of `marker` in the body: one per participant. */
  rows: number;
  status: number;
}

/** One GET read to the end, counting bytes and the occurrences of `marker` (also across chunk borders). */
export function streamOnce(url: string, headers: Record<string, string>, marker = '\u0000'): Promise<StreamRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    request(url, { headers }, (response) => {
      let bytes = 0;
      let rows = 0;
      let tail = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        bytes += Buffer.byteLength(chunk);
        const text = tail + chunk;
        for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, at + marker.length)) rows += 1;
        tail = text.slice(Math.max(0, text.length - marker.length + 1));
      });
      response.on('end', () =>
        resolve({ ms: performance.now() - started, bytes, rows, status: response.statusCode ?? 0 }),
      );
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/** Scenario 8 against the service: every participant, with the service's peak resident memory meanwhile. */
export async function streamRows(service: RunningProcess, data: Dataset) {
  const { path, headers } = streamRequest(data);
  const sampler = sampleRss(service.pid);
  const run = await streamOnce(`${service.url}${path}`, headers, `"qualifiedIdentifier":"${PARTICIPANT_SCHEME}::`);
  const peakMiB = sampler.stop();
  return { ...run, peakMiB, errors: run.status === 200 ? 0 : 1 };
}
