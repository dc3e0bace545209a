/**
 * The merchant API's signature (docs/signing.md), made in the browser with
 * WebCrypto: lowercase hex HMAC-SHA256, keyed with the app secret, over the
 * timestamp, the nonce, the path and the raw body, joined by line feeds.
 */

export interface Credentials {
  readonly apiKey: string;
  readonly appSecret: string;
}

export interface SignedHeaders {
  readonly 'X-Api-Key': string;
  readonly 'X-Timestamp': string;
  readonly 'X-Nonce': string;
  readonly 'X-Signature': string;
}

const encoder = new TextEncoder();

/** The four lines the service signs: the path has no query string, the body is the exact text sent. */
export const stringToSign = (timestamp: string, nonce: string, path: string, body: string) => `${timestamp}\n${nonce}\n${path}\n${body}`;

export async function hmacSha256Hex(secret: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const signature = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(text)));
  return Array.from(signature, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** 16 random bytes in hex, as docs/signing.md suggests. */
export function newNonce(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The headers of one request: a fresh timestamp (Unix seconds) and nonce, and the signature over them, the path and the body. */
export async function sign(credentials: Credentials, path: string, body: string, now = Date.now()): Promise<SignedHeaders> {
  const timestamp = String(Math.floor(now / 1000));
  const nonce = newNonce();
  return {
    'X-Api-Key': credentials.apiKey,
    'X-Timestamp': timestamp,
    'X-Nonce': nonce,
    'X-Signature': await hmacSha256Hex(credentials.appSecret, stringToSign(timestamp, nonce, path, body)),
  };
}
