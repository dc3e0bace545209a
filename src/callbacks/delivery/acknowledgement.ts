/**
 * Contract §2: a callback is acknowledged only by a 2xx reply whose body is
 * exactly `success`, exactly `ok`, or a JSON object whose `success` is `true`.
 * The merchant's reply decides whether we stop retrying, so the rule is strict:
 * no trimming, no case folding, no truthy values.
 */
const SUCCESS = Buffer.from('success');
const OK = Buffer.from('ok');

export function isAcknowledged(status: number, body: Buffer): boolean {
  if (!Number.isInteger(status) || status < 200 || status > 299) return false;
  if (body.equals(SUCCESS) || body.equals(OK)) return true;
  const parsed = parseJson(body);
  // Arrays and null are objects to typeof, but not the JSON object the contract means.
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && (parsed as { success?: unknown }).success === true;
}

function parseJson(body: Buffer): unknown {
  try {
    // JSON text is UTF-8 (RFC 8259); a body that is not is not JSON, rather than JSON with U+FFFD in it.
    return JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body));
  } catch {
    return undefined;
  }
}
