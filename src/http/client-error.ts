/**
 * Requests Node's HTTP parser refuses before the app sees them: a malformed request line or
 * header, a bad Content-Length or chunk, headers over Node's limit, a method Node does not know.
 * Without a `clientError` listener Node answers them with a bare status line, the one answer of
 * the service that is not the error envelope (SPEC §4). The listener answers them in the
 * envelope, and logs the parser's code only: its error carries the request bytes as received
 * (`rawPacket`), the Authorization and X-API-Key headers included.
 */
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ErrorCode } from '../errors.js';
import { errorBody, STATUS_BY_CODE } from './middleware/errors.js';

interface Refusal {
  code: ErrorCode;
  message: string;
}

/** Node's own statuses for these errors (431, 408, 413, else 400), as codes of the errors module. */
function refusal(parserCode: string | undefined): Refusal {
  switch (parserCode) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'HEADERS_TOO_LARGE', message: 'the request headers are too large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: 'PAYLOAD_TOO_LARGE', message: 'the request chunk extensions are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in time' };
    default:
      return { code: 'INVALID_REQUEST', message: 'the request is not valid HTTP/1.1' };
  }
}

/** The whole answer as bytes: the parser is gone, so there is no response object to write with. */
export function clientErrorAnswer(parserCode: string | undefined): string {
  const { code, message } = refusal(parserCode);
  const status = STATUS_BY_CODE[code] ?? 400;
  const body = JSON.stringify(errorBody(code, message));
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex & { bytesWritten?: number }) => {
    // a client that went away has nobody to answer; an answer already begun cannot take another
    if (err.code === 'ECONNRESET' || !socket.writable || (socket.bytesWritten ?? 0) > 0) {
      socket.destroy();
      return;
    }
    logger.debug({ code: err.code }, 'malformed request refused');
    socket.end(clientErrorAnswer(err.code));
  });
}
