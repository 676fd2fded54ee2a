import type { ConnectionError, FastifyInstance } from 'fastify';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody } from '../core/errors.js';
import { ERROR_MEDIA_TYPE } from './error-handler.js';
import { SECURITY_HEADERS } from './security-headers.js';

/** What Node's HTTP parser refused, as the API names it. */
interface ParserRefusal {
  status: number;
  exception: string;
  message: string;
}

const MALFORMED: ParserRefusal = {
  status: 400,
  exception: 'BadRequestError',
  message: 'The request is not valid HTTP',
};
const HEADERS_TOO_LARGE: ParserRefusal = {
  status: 431,
  exception: 'RequestHeaderFieldsTooLargeError',
  message: 'The request headers are larger than the service accepts',
};
const REQUEST_LINE_TOO_LONG: ParserRefusal = {
  status: 414,
  exception: 'UriTooLongError',
  message: 'The request line is longer than the service accepts',
};
const TIMEOUT: ParserRefusal = {
  status: 408,
  exception: 'RequestTimeoutError',
  message: 'The request was not received in time',
};

const REQUEST_LINE = /^[A-Z]+ (\S+)/;
/** A path longer than this is not repeated in the error body. */
const PATH_ECHO_LIMIT = 2048;

/**
 * Requests Node's HTTP parser refuses before any route or hook runs (a malformed request line, headers or
 * request line over `maxHeaderSize`, a request that does not arrive in time) are answered here, straight on
 * the socket: the common error body and the header constants like every other answer, then the connection
 * closes. The parser reports an over-long request line as a header overflow; it is a 414 when the read it
 * stopped in begins with a request line that had not ended where the parser stopped (a request line split
 * over several reads is reported as 431).
 */
export function clientErrors(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  // A reset connection cannot be answered; a response already under way must not be cut by another one.
  const response = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
    socket.destroy();
    return;
  }
  // Typed as JSON by Fastify, a Buffer at run time: the bytes of the read the parser stopped in.
  const packet = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString('latin1') : '';
  const refusal = refusalOf(error, packet);
  this.log.debug({ err: error, status: refusal.status }, 'request refused by the HTTP parser');
  // A request whose body did not arrive in time has its path; otherwise it is in the read the parser stopped in.
  socket.end(rawResponse(refusal, response?.req.url === undefined ? requestPath(packet) : pathOf(response.req.url)));
}

function refusalOf(error: ConnectionError, packet: string): ParserRefusal {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return TIMEOUT;
  if (error.code !== 'HPE_HEADER_OVERFLOW') return MALFORMED;
  const lineEnd = packet.indexOf('\r\n');
  const inRequestLine = REQUEST_LINE.test(packet) && (lineEnd === -1 || lineEnd >= error.bytesParsed);
  return inRequestLine ? REQUEST_LINE_TOO_LONG : HEADERS_TOO_LARGE;
}

function requestPath(packet: string): string {
  return pathOf(REQUEST_LINE.exec(packet)?.[1] ?? '');
}

function pathOf(target: string): string {
  const path = target.split('?')[0] ?? '';
  return path.length <= PATH_ECHO_LIMIT ? path : '';
}

function rawResponse(refusal: ParserRefusal, path: string): string {
  const body = JSON.stringify(errorBody(refusal.status, refusal.exception, refusal.message, path));
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    'content-type': ERROR_MEDIA_TYPE,
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  return `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n${lines.join('\r\n')}\r\n\r\n${body}`;
}
