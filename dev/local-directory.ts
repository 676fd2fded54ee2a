import { fileURLToPath } from 'node:url';
import { parseQualifiedIdentifier } from '../src/core/schemas.js';
import {
  startLocalServer,
  type Failure,
  type LocalServer,
  type LocalTls,
  type Pace,
  paceOfArguments,
} from './local-server.js';

export interface LocalDirectory extends LocalServer {
  /** The participants it has indexed, and how often each was pushed. */
  indexed: Map<string, number>;
  calls: { put: number; delete: number; failed: number };
  /** From now on, misbehave for this participant only (`none` ends it): as `Failure` says, or `badRequest` (400). */
  failFor(participant: string, failure: Failure | 'badRequest' | 'none'): void;
}

const INDEXER = '/indexer/1.0/';

/**
 * A small Peppol Directory indexer for development and tests: `PUT /indexer/1.0/` (participant id as the body,
 * 204) and `DELETE /indexer/1.0/{id}` (204, 404 when unknown), in memory, with switchable failures; over HTTPS
 * requiring a client certificate with `tls`. Run it alone with `tsx dev/local-directory.ts [port] [latencyMs] [maxInFlight]`.
 */
export async function startLocalDirectory(port = 0, tls?: LocalTls, pace?: Pace): Promise<LocalDirectory> {
  const indexed = new Map<string, number>();
  const calls = { put: 0, delete: 0, failed: 0 };
  const failing = new Map<string, Failure | 'badRequest'>();
  const server = await startLocalServer(
    port,
    (request, body, response, misbehave) => {
      const path = request.url ?? '';
      const named = (
        request.method === 'PUT' ? body.trim() : decodeURIComponent(path.slice(INDEXER.length))
      ).toLowerCase();
      const failure = failing.get(named);
      if (failure === 'badRequest')
        return void response.writeHead(400).end('the indexer refuses this participant (local Directory failure mode)');
      if (failure) return misbehave(failure);
      if (request.method === 'PUT' && path === INDEXER) {
        const participant = body.trim().toLowerCase();
        if (parseQualifiedIdentifier(participant) === undefined)
          return void response.writeHead(400).end('not a participant identifier');
        calls.put += 1;
        indexed.set(participant, (indexed.get(participant) ?? 0) + 1);
        return void response.writeHead(204).end();
      }
      if (request.method === 'DELETE' && path.startsWith(INDEXER)) {
        const participant = decodeURIComponent(path.slice(INDEXER.length)).toLowerCase();
        if (!indexed.delete(participant)) return void response.writeHead(404).end();
        calls.delete += 1;
        return void response.writeHead(204).end();
      }
      response.writeHead(404).end();
    },
    (response) => {
      calls.failed += 1;
      response.writeHead(500).end('indexer failing (local Directory failure mode)');
    },
    tls,
    pace,
  );
  return {
    ...server,
    indexed,
    calls,
    failFor(participant, how) {
      if (how === 'none') failing.delete(participant);
      else failing.set(participant, how);
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const directory = await startLocalDirectory(
    Number(process.argv[2] ?? 8092),
    undefined,
    paceOfArguments(process.argv.slice(3)),
  );
  console.log(`local Peppol Directory at ${directory.url} (DIRECTORY_URL=${directory.url})`);
}
