/**
 * The service's side of request signing (spec §5): the merchant API checks
 * requests with it and the callback worker signs callbacks. src/merchant-client
 * keeps its own copy on purpose: merchants take that folder as it is.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The four lines a request is signed over: timestamp, nonce, path, raw body. */
export function stringToSign(timestamp: string, nonce: string, path: string, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${timestamp}\n${nonce}\n${path}\n`, 'utf8'), body]);
}

export function signatureOf(appSecret: string, message: Buffer): string {
  return createHmac('sha256', appSecret).update(message).digest('hex');
}

/** Constant-time check of a lowercase hex HMAC-SHA256. */
export function signatureMatches(appSecret: string, message: Buffer, given: string): boolean {
  const expected = Buffer.from(signatureOf(appSecret, message), 'utf8');
  const actual = Buffer.from(given, 'utf8');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
