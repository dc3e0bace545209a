/**
 * What the benchmark's own servers (the bare baseline and the CRUD server)
 * share with each other: reading a bounded body, the error envelope, and the
 * signature check of merchant API v2 (contract §1.5), in its order: the four
 * headers, a known key, the timestamp window, the HMAC in constant time.
 */
import http from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { sign, TIMESTAMP_TOLERANCE_SECONDS } from '../../src/merchant-client/signing';

const MAX_BODY_BYTES = 64 * 1024;
const AUTH_HEADERS = ['x-api-key', 'x-timestamp', 'x-nonce', 'x-signature'] as const;

export function reply(response: http.ServerResponse, status: number, payload: object): void {
  const text = JSON.stringify(payload);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

export const refuse = (response: http.ServerResponse, status: number, code: string, field?: string) =>
  reply(response, status, { success: false, code, message: code, ...(field === undefined ? {} : { field }) });

/** The raw body, or undefined when it exceeds 64 KiB (read to the end either way, so the connection stays usable). */
export function readBody(request: http.IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

export interface SignedRequest {
  apiKey: string;
  nonce: string;
}

export type Refusal = { status: number; code: string };

/**
 * Checks the signature of a request whose body is `raw`. `secretOf` finds the
 * app secret of a key (undefined: unknown key). The nonce is left to the caller.
 */
export async function checkSignature(
  request: http.IncomingMessage,
  raw: Buffer,
  secretOf: (apiKey: string) => string | undefined | Promise<string | undefined>,
): Promise<SignedRequest | Refusal> {
  const values: string[] = [];
  for (const name of AUTH_HEADERS) {
    const value = request.headers[name];
    if (typeof value !== 'string' || value === '') return { status: 401, code: 'MISSING_AUTH_HEADER' };
    values.push(value);
  }
  const [apiKey, timestamp, nonce, signature] = values;
  const appSecret = await secretOf(apiKey);
  if (appSecret === undefined) return { status: 401, code: 'INVALID_API_KEY' };
  if (!/^[0-9]{1,15}$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) {
    return { status: 401, code: 'TIMESTAMP_EXPIRED' };
  }
  const path = (request.url ?? '').split('?')[0];
  const expected = Buffer.from(sign(appSecret, timestamp, nonce, path, raw), 'utf8');
  const received = Buffer.from(signature, 'utf8');
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) return { status: 401, code: 'INVALID_SIGNATURE' };
  return { apiKey, nonce };
}

/** The body as a JSON object, or undefined. */
export function parseObject(raw: Buffer): Record<string, unknown> | undefined {
  try {
    const body: unknown = JSON.parse(raw.toString('utf8'));
    return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Prints "<TAG>_LISTENING <port>" once listening, which startNodeChild's waitForLine picks up. */
export function listen(server: http.Server, tag: string): void {
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    const address = server.address();
    console.log(`${tag}_LISTENING ${typeof address === 'object' && address ? address.port : ''}`);
  });
}

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is required`);
    process.exit(78);
  }
  return value;
}
