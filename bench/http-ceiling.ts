/**
 * The HTTP ceiling: a bare `node:http` server that answers `/size/<bytes>` with a JSON body of that many
 * bytes (after reading any request body) and streams `/stream/<bytes>` in 64 KiB chunks. Nothing else runs
 * per request, so the load generator measures what HTTP alone costs on this machine.
 */
import { createServer, type ServerResponse } from 'node:http';

const bodies = new Map<number, Buffer>();

function bodyOf(bytes: number): Buffer {
  let body = bodies.get(bytes);
  if (!body) {
    body = bytes < 2 ? Buffer.alloc(bytes, ' ') : Buffer.from(`"${'x'.repeat(bytes - 2)}"`);
    bodies.set(bytes, body);
  }
  return body;
}

function stream(response: ServerResponse, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  response.writeHead(200, { 'content-type': 'application/json' });
  let left = total;
  const write = () => {
    while (left > 0) {
      const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= part.length;
      if (!response.write(part)) return void response.once('drain', write);
    }
    response.end();
  };
  write();
}

const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const [, kind, size, status] = /^\/(size|stream)\/(\d+)(?:\/(\d+))?/.exec(request.url ?? '') ?? [];
    const bytes = Number(size ?? 0);
    if (kind === 'stream') return stream(response, bytes);
    const body = bodyOf(bytes);
    const code = Number(status ?? 200);
    response.writeHead(code, code === 204 ? {} : { 'content-type': 'application/json', 'content-length': body.length });
    response.end(code === 204 ? undefined : body);
  });
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
