import { connect } from 'node:net';

/** A response read from a raw socket, shaped like an injected one for the shared assertions. */
export interface RawResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  json<T = Record<string, unknown>>(): T;
}

export interface RawOptions {
  /** Leaves the sending side open, as a client still sending its body does. */
  keepWriting?: boolean;
  /** The loopback address the request comes from (127.0.0.2, ...): another client to the server. */
  localAddress?: string;
  /** After `request`, one byte of body every so many milliseconds, until the server closes. */
  trickleMs?: number;
}

/** Sends bytes as they are (no HTTP client would send them) and reads the answer until the server closes. */
export function sendRaw(
  address: { host: string; port: number },
  request: string,
  options: RawOptions = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let trickle: NodeJS.Timeout | undefined;
    const socket = connect({ ...address, localAddress: options.localAddress }, () => {
      if (options.trickleMs !== undefined) {
        socket.write(request);
        trickle = setInterval(() => socket.write('x'), options.trickleMs);
      } else if (options.keepWriting) socket.write(request);
      else socket.end(request);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close while the request is still being written; what it answered is still there.
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error),
    );
    socket.on('close', () => {
      clearInterval(trickle);
      const text = Buffer.concat(chunks).toString('utf8');
      if (text === '') reject(new Error('the server closed the connection without an answer'));
      else resolve(parseResponse(text));
    });
  });
}

function parseResponse(text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...headerLines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  const body = text.slice(end + 4);
  return { statusCode: Number(statusLine.split(' ')[1]), headers, body, json: () => JSON.parse(body) };
}
