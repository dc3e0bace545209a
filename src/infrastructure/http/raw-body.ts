import type { Request } from 'express';
import { ApiError } from './api-error';

/**
 * The body exactly as received, at most `limit` bytes. Signatures are checked
 * over these bytes, never over a re-serialised body.
 */
export async function readRawBody(request: Request, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      chunks.push(chunk);
    }
  } catch (error) {
    // The stream only breaks when its connection closed before the body was whole.
    if (!(error instanceof ApiError) && request.destroyed) throw new ClientGoneError();
    throw error;
  }
  return Buffer.concat(chunks, size);
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
  return new ApiError(413, 'PAYLOAD_TOO_LARGE', `The body is larger than ${limit / 1024} KiB`, undefined, { Connection: 'close' });
}
