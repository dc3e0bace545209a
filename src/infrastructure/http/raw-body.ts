import type { Request } from 'express';
import { ApiError } from './api-error';

/**
 * The body exactly as received, at most `limit` bytes. Signatures are checked
 * over these bytes, never over a re-serialised body. Read with the stream's
 * events: its async iterator costs a promise and a set of listeners per
 * chunk, a few percent of a submit's CPU.
 */
export function readRawBody(request: Request, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(limit));
  if (request.destroyed) return Promise.reject(new ClientGoneError());
  if (request.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (error?: Error) => {
      request.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // The rest stays unread: the answer closes the connection (see tooLarge).
      request.pause();
      settle(tooLarge(limit));
    };
    const onEnd = () => settle();
    // The stream only breaks when its connection closed before the body was whole.
    const onError = (error: Error) => settle(request.destroyed ? new ClientGoneError() : error);
    const onClose = () => settle(new ClientGoneError());
    request.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/**
 * The connection closed before the body arrived: the client went away, or the
 * HTTP server already answered and closed it (a malformed body, a timeout).
 * Nothing went wrong in the service and nobody is left to answer; the HTTP
 * server counted it (client-errors.ts).
 */
export class ClientGoneError extends Error {
  constructor() {
    super('The connection closed before the request body arrived');
    this.name = 'ClientGoneError';
  }
}

function tooLarge(limit: number): ApiError {
  // The rest of the body is never read, so the connection cannot be reused.
  const size = limit >= 1024 * 1024 ? `${limit / 1024 / 1024} MiB` : `${limit / 1024} KiB`;
  return new ApiError(413, 'PAYLOAD_TOO_LARGE', `The body is larger than ${size}`, undefined, { Connection: 'close' });
}
