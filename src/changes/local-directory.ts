import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { SmlFailure } from './local-sml.js';

export interface LocalDirectory {
  url: string;
  /** The participants it has indexed, and how often each was pushed. */
  indexed: Map<string, number>;
  calls: { put: number; delete: number; failed: number };
  fail(failure: SmlFailure): void;
  close(): Promise<void>;
}

/**
 * A small Peppol Directory indexer for development and tests: `PUT /indexer/1.0/` (participant id as the body,
 * 204) and `DELETE /indexer/1.0/{id}` (204, 404 when unknown), in memory, with switchable failures. Run it
 * alone with `tsx src/changes/local-directory.ts [port]`.
 */
export async function startLocalDirectory(port = 0): Promise<LocalDirectory> {
  const indexed = new Map<string, number>();
  const calls = { put: 0, delete: 0, failed: 0 };
  let failure: SmlFailure = 'none';
  const hung = new Set<http.ServerResponse>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (failure === 'refuse') return void request.socket.destroy();
      if (failure === 'timeout') return void hung.add(response);
      if (failure === 'fault') {
        calls.failed += 1;
        return void response.writeHead(500).end('indexer failing (local Directory failure mode)');
      }
      const path = request.url ?? '';
      if (request.method === 'PUT' && path === '/indexer/1.0/') {
        const participant = Buffer.concat(chunks).toString('utf8').trim().toLowerCase();
        if (!participant.includes('::')) return void response.writeHead(400).end('not a participant identifier');
        calls.put += 1;
        indexed.set(participant, (indexed.get(participant) ?? 0) + 1);
        return void response.writeHead(204).end();
      }
      if (request.method === 'DELETE' && path.startsWith('/indexer/1.0/')) {
        const participant = decodeURIComponent(path.slice('/indexer/1.0/'.length)).toLowerCase();
        if (!indexed.delete(participant)) return void response.writeHead(404).end();
        calls.delete += 1;
        return void response.writeHead(204).end();
      }
      response.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    indexed,
    calls,
    fail(next) {
      failure = next;
      if (next !== 'timeout') for (const response of hung) response.destroy();
    },
    async close() {
      for (const response of hung) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const directory = await startLocalDirectory(Number(process.argv[2] ?? 8092));
  console.log(`local Peppol Directory at ${directory.url} (DIRECTORY_URL=${directory.url})`);
}
