import { randomUUID } from 'node:crypto';
import { maxHeaderSize, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { failureEnvelope } from './api-error';
import { ClientErrorKind, ClientErrorLog } from './client-error-log';
import { sendJson } from './json-reply';

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

/** Where a connection went wrong, and what reply, if any, the client can still read. */
export function classify(error: NodeJS.ErrnoException & { reason?: string }): { kind: ClientErrorKind; refusal?: Refusal } {
  const code = error.code ?? '';
  if (code === 'HPE_HEADER_OVERFLOW') {
    const message = `The request line and headers are larger than ${maxHeaderSize / 1024} KiB`;
    return { kind: 'headers too large', refusal: { status: 431, code: 'HEADERS_TOO_LARGE', message } };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    const message = 'The request did not arrive in full in time; nothing was done, and it may be sent again';
    return { kind: 'timed out', refusal: { status: 408, code: 'REQUEST_TIMEOUT', message } };
  }
  const malformed = { status: 400, code: 'MALFORMED_HTTP', message: `The request is not valid HTTP/1.1: ${error.reason ?? code}` };
  // The client closed its side before the request was whole: it may still read a reply.
  if (code === 'HPE_INVALID_EOF_STATE') return { kind: 'abandoned mid-request', refusal: malformed };
  if (code.startsWith('HPE_')) return { kind: 'malformed', refusal: malformed };
  // Reset, broken pipe: nobody is left to read a reply.
  return { kind: 'abandoned mid-request' };
}

/**
 * Answers what Node's parser refuses in the contract's envelope instead of
 * Node's empty 400, then closes the connection: after bytes that are not
 * HTTP, nothing on it can be trusted to start a request. `headerLines`, raw
 * "Name: value\r\n" lines, go on every such reply (the security headers).
 */
export function answerClientErrors(server: Server, log: ClientErrorLog, headerLines: string): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser reports again for every later chunk of a connection it gave up on.
    if (answered.has(socket)) return;
    answered.add(socket);
    const { kind, refusal } = classify(error);
    log.record(kind);
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
    // The id of the request that was under way, if its headers were read; else one for this reply alone.
    const requestId = (inFlight?.getHeader('X-Request-Id') as string | undefined) ?? randomUUID();
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nDate: ${new Date().toUTCString()}\r\nX-Request-Id: ${requestId}\r\n${headerLines}` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(cut));
  });
}

/** The same refusal for a request that parsed but breaks a rule the parser leaves to us. */
export function refuse(response: ServerResponse, refusal: Refusal & { field?: string }): void {
  response.setHeader('Connection', 'close');
  sendJson(response, refusal.status, failureEnvelope(refusal.code, refusal.message, refusal.field));
}
