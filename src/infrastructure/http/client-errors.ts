import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { failureEnvelope } from './api-error';

/**
 * How long a refused connection may go on sending before it is cut. Closing a
 * socket with unread bytes resets the connection, and a reset can destroy the
 * reply before the client has read it; so the reply is followed by a FIN, and
 * what the client still sends is read and dropped for a moment.
 */
const LINGER_MS = 2000;

interface Refusal {
  status: number;
  code: string;
  message: string;
}

/**
 * The reply to a request that Node's HTTP parser refused, or undefined when
 * the client is gone (reset, broken pipe) and nobody is left to read one.
 */
export function refusalFor(error: NodeJS.ErrnoException & { reason?: string }): Refusal | undefined {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, code: 'HEADERS_TOO_LARGE', message: `The request line and headers are larger than ${maxHeaderSize / 1024} KiB` };
  }
  if (error.code?.startsWith('HPE_')) {
    return { status: 400, code: 'MALFORMED_HTTP', message: `The request is not valid HTTP/1.1: ${error.reason ?? error.code}` };
  }
  return undefined;
}

/**
 * Answers what Node's parser refuses in the contract's envelope instead of
 * Node's empty 400, then closes the connection: after bytes that are not
 * HTTP, nothing on it can be trusted to start a request.
 */
export function answerClientErrors(server: Server): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser reports again for every later chunk of a connection it gave up on.
    if (answered.has(socket)) return;
    answered.add(socket);
    const refusal = refusalFor(error);
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (refusal && inFlight?.req.complete) {
      // The bad bytes came after a whole request, which is being handled: its own
      // answer tells the client what happened, so it is the last on this connection.
      if (!inFlight.headersSent) inFlight.setHeader('Connection', 'close');
      inFlight.once('finish', () => socket.end());
      return;
    }
    // A response already under way on this connection must not be cut into by another.
    if (!refusal || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify(failureEnvelope(refusal.code, refusal.message));
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nDate: ${new Date().toUTCString()}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(cut));
  });
}

/** The same refusal for a request that parsed but breaks a rule the parser leaves to us. */
export function refuse(response: ServerResponse, refusal: Refusal & { field?: string }): void {
  const body = JSON.stringify(failureEnvelope(refusal.code, refusal.message, refusal.field));
  response.writeHead(refusal.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(body);
}
