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
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function tooLarge(limit: number): ApiError {
  // The rest of the body is never read, so the connection cannot be reused.
  return new ApiError(413, 'PAYLOAD_TOO_LARGE', `The body is larger than ${limit / 1024} KiB`, undefined, { Connection: 'close' });
}
