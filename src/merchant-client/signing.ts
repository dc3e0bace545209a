/**
 * Request and callback signing for merchant API v2 (spec §5, contract §2).
 *
 * Self-contained: node:crypto only, so a merchant can copy this folder into its
 * own code base. See docs/signing.md for the rules and a curl/openssl example.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The service's clock window, either way, in seconds. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

/**
 * The bytes that are signed: timestamp, nonce, path and body joined by "\n",
 * with no trailing line feed. The body is appended byte for byte; a string body
 * is taken as its UTF-8 bytes, which is what fetch sends for a string.
 */
export function stringToSign(timestamp: string, nonce: string, path: string, body: string | Uint8Array): Buffer {
  const head = Buffer.from(`${timestamp}\n${nonce}\n${path}\n`, 'utf8');
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return Buffer.concat([head, bytes]);
}

/** Lowercase hex HMAC-SHA256 of the string to sign, keyed with the app secret. */
export function sign(appSecret: string, timestamp: string, nonce: string, path: string, body: string | Uint8Array): string {
  return createHmac('sha256', appSecret)
    .update(stringToSign(timestamp, nonce, path, body))
    .digest('hex');
}

/** 16 random bytes as 32 hex characters: well inside the 1-128 printable ASCII rule. */
export function newNonce(): string {
  return randomBytes(16).toString('hex');
}

/** node's IncomingHttpHeaders, any plain object of header values, or a fetch `Headers`. */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyCallbackInput {
  /** The merchant's own app secret: the service signs callbacks with it. */
  appSecret: string;
  /** The path of the callback URL as the service signed it, e.g. `/topup/callback` (no scheme, host or query string). */
  path: string;
  headers: HeaderSource;
  /** The body exactly as received. Never a re-serialised `JSON.parse` result. */
  rawBody: string | Uint8Array;
  toleranceSeconds?: number;
  /** The current time in milliseconds since the epoch (default `Date.now()`). */
  now?: number;
  /**
   * Replay protection, which this module does not keep itself. Called only for a
   * callback whose signature and timestamp are valid, so forged requests cannot
   * fill your store. Return true when the nonce was seen before; otherwise
   * remember it (for at least 10 minutes: twice the timestamp window) and return false.
   */
  seenNonce?: (nonce: string) => boolean;
}

export type VerifyCallbackResult = { ok: true } | { ok: false; reason: 'MISSING_HEADER' | 'TIMESTAMP_EXPIRED' | 'INVALID_SIGNATURE' | 'NONCE_REUSED' };

/**
 * Checks a callback from the service: it is signed like a merchant request,
 * with the merchant's own secret, over the path of the callback URL.
 */
export function verifyCallback(input: VerifyCallbackInput): VerifyCallbackResult {
  const { appSecret, path, headers, rawBody, toleranceSeconds = TIMESTAMP_TOLERANCE_SECONDS, now = Date.now() } = input;
  const apiKey = header(headers, 'x-api-key');
  const timestamp = header(headers, 'x-timestamp');
  const nonce = header(headers, 'x-nonce');
  const signature = header(headers, 'x-signature');
  if (!apiKey || !timestamp || !nonce || !signature) return { ok: false, reason: 'MISSING_HEADER' };

  // Unix seconds, digits only: anything else cannot be inside the window.
  if (!/^[0-9]{1,15}$/.test(timestamp)) return { ok: false, reason: 'TIMESTAMP_EXPIRED' };
  // Compared with the unrounded clock, as the service does for requests.
  if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) return { ok: false, reason: 'TIMESTAMP_EXPIRED' };

  const expected = Buffer.from(sign(appSecret, timestamp, nonce, path, rawBody), 'utf8');
  const received = Buffer.from(signature, 'utf8');
  // timingSafeEqual throws on unequal lengths; the length of a hex digest is no secret.
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) return { ok: false, reason: 'INVALID_SIGNATURE' };

  if (input.seenNonce?.(nonce)) return { ok: false, reason: 'NONCE_REUSED' };
  return { ok: true };
}

/**
 * One header value, looked up case-insensitively. A header repeated under two
 * spellings or as an array of several values counts as missing: we never guess
 * which copy was signed. (Node and fetch join a repeated header into "a, b",
 * which simply fails the signature.)
 */
function header(headers: HeaderSource, name: string): string | undefined {
  if (isFetchHeaders(headers)) return headers.get(name) ?? undefined;
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    if (typeof value === 'string') values.push(value);
    else values.push(...value);
  }
  return values.length === 1 ? values[0] : undefined;
}

function isFetchHeaders(headers: HeaderSource): headers is Headers {
  // Duck-typed so a Headers from another fetch implementation works too.
  return typeof (headers as Headers).get === 'function' && typeof (headers as Headers).forEach === 'function';
}
