import { createHmac, randomBytes } from 'node:crypto';
import { provisionMerchant, signedFetch, TestMerchant, timestampFromNow } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

/**
 * POST /api/v2/tools/verify-signature (CONTRACT §1): shows the four lines the
 * service signed over, says whether the signature and the timestamp pass,
 * needs a known key, enforces nothing else, consumes no nonce and never
 * reveals the expected signature.
 */

const VERIFY = '/api/v2/tools/verify-signature';
const BALANCE = '/api/v2/balance';

describe('POST /api/v2/tools/verify-signature', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let merchant: TestMerchant;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    merchant = await provisionMerchant(service);
  });
  afterAll(async () => teardown());

  const now = () => String(Math.floor(Date.now() / 1000));
  const nonce = () => randomBytes(12).toString('hex');
  const hmac = (secret: string, ts: string, n: string, path: string, body: Buffer) =>
    createHmac('sha256', secret)
      .update(Buffer.concat([Buffer.from(`${ts}\n${n}\n${path}\n`), body]))
      .digest('hex');

  /** A POST with exactly these headers (none added) and this body, answered as raw text. */
  async function rawPost(path: string, headers: Record<string, string>, body: string | Buffer) {
    const response = await fetch(`${service.url}${path}`, { method: 'POST', headers, body });
    const text = await response.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, text, json, headers: response.headers };
  }

  /** A verify-signature call signed correctly over `body`, unless a part is overridden. */
  function verify(body: string | Buffer, parts: { ts?: string; nonce?: string; signature?: string } = {}) {
    const ts = parts.ts ?? now();
    const n = parts.nonce ?? nonce();
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const signature = parts.signature ?? hmac(merchant.appSecret, ts, n, VERIFY, bytes);
    return rawPost(
      VERIFY,
      { 'Content-Type': 'application/json', 'X-Api-Key': merchant.apiKey, 'X-Timestamp': ts, 'X-Nonce': n, 'X-Signature': signature },
      bytes,
    );
  }

  function expectOk(reply: { status: number; json: any }) {
    expect(reply.status).toBe(200);
    expect(reply.json.success).toBe(true);
    expect(reply.json.code).toBe('OK');
    expect(Object.keys(reply.json).sort()).toEqual(['code', 'data', 'success']);
    expect(Object.keys(reply.json.data).sort()).toEqual(['signature_matches', 'string_to_sign', 'string_to_sign_lines', 'timestamp_within_tolerance']);
    return reply.json.data;
  }

  it('returns the four lines, their join, and true, true for a good request', async () => {
    const ts = now();
    const n = 'nonce-good-1';
    const body = '{"out_trade_no":"A-1","sku_id":"mlbb-86"}';
    const data = expectOk(await verify(body, { ts, nonce: n }));
    expect(data).toEqual({
      string_to_sign_lines: [ts, n, VERIFY, body],
      string_to_sign: `${ts}\n${n}\n${VERIFY}\n${body}`,
      signature_matches: true,
      timestamp_within_tolerance: true,
    });
  });

  it('the string to sign is exactly what the client signs: its HMAC is the right signature', async () => {
    const data = expectOk(await verify('{"x":1}'));
    const ts = data.string_to_sign_lines[0];
    const n = data.string_to_sign_lines[1];
    expect(createHmac('sha256', merchant.appSecret).update(data.string_to_sign).digest('hex')).toBe(
      hmac(merchant.appSecret, ts, n, VERIFY, Buffer.from('{"x":1}')),
    );
  });

  it('says false for a bad signature, and never shows the expected one', async () => {
    const ts = now();
    const n = nonce();
    const body = '{"probe":true}';
    const expected = hmac(merchant.appSecret, ts, n, VERIFY, Buffer.from(body));
    const wrong = hmac('not-the-secret', ts, n, VERIFY, Buffer.from(body));
    for (const signature of [wrong, expected.toUpperCase(), expected.slice(0, 63), 'x']) {
      const reply = await verify(body, { ts, nonce: n, signature });
      const data = expectOk(reply);
      expect(data.signature_matches).toBe(false);
      expect(data.timestamp_within_tolerance).toBe(true);
      expect(reply.text.toLowerCase()).not.toContain(expected);
      expect(reply.text.toLowerCase()).not.toContain(expected.slice(0, 16));
      // No 64-hex-digit value of any kind, and nothing in the headers either.
      expect(reply.text).not.toMatch(/[0-9a-f]{64}/i);
      expect(JSON.stringify([...reply.headers.entries()]).toLowerCase()).not.toContain(expected);
    }
  });

  it('says false for a signature over another path or another body', async () => {
    const ts = now();
    const n = nonce();
    const body = '{"a":1}';
    const otherPath = hmac(merchant.appSecret, ts, n, BALANCE, Buffer.from(body));
    const otherBody = hmac(merchant.appSecret, ts, n, VERIFY, Buffer.from('{"a":2}'));
    expect(expectOk(await verify(body, { ts, nonce: n, signature: otherPath })).signature_matches).toBe(false);
    expect(expectOk(await verify(body, { ts, nonce: n, signature: otherBody })).signature_matches).toBe(false);
  });

  it.each([
    ['400 s old', false, -400],
    ['400 s ahead', false, 400],
    ['299 s old', true, -299],
    ['299 s ahead', true, 299],
  ])('a timestamp %s: timestamp_within_tolerance is %p, signature_matches on its own', async (_name, within, offset) => {
    const ts = timestampFromNow(offset);
    const data = expectOk(await verify('{}', { ts }));
    expect(data.timestamp_within_tolerance).toBe(within);
    expect(data.signature_matches).toBe(true);
    expect(data.string_to_sign_lines[0]).toBe(ts);
  });

  it.each([
    ['milliseconds', String(Date.now())],
    ['not a number', 'yesterday'],
    ['a fraction', `${now()}.5`],
  ])('a timestamp in %s is not within tolerance', async (_name, ts) => {
    const data = expectOk(await verify('{}', { ts }));
    expect(data.timestamp_within_tolerance).toBe(false);
    expect(data.string_to_sign_lines[0]).toBe(ts);
  });

  it('consumes no nonce: twice with one nonce gives 200 both times, and the nonce still works for a real call', async () => {
    const n = `reusable-${nonce()}`;
    const first = expectOk(await verify('{}', { nonce: n }));
    const second = expectOk(await verify('{}', { nonce: n }));
    expect(first.signature_matches).toBe(true);
    expect(second.signature_matches).toBe(true);
    const real = await signedFetch(service, merchant, { path: BALANCE, body: '{}', nonce: n });
    expect(real.status).toBe(200);
    expect(real.body.code).toBe('OK');
    // The real call did consume it, and verify-signature still does not care.
    const replay = await signedFetch(service, merchant, { path: BALANCE, body: '{}', nonce: n });
    expect({ status: replay.status, code: replay.body.code }).toEqual({ status: 401, code: 'NONCE_REUSED' });
    expectOk(await verify('{}', { nonce: n }));
  });

  it('an unknown X-Api-Key: 401 INVALID_API_KEY', async () => {
    const ts = now();
    const reply = await rawPost(VERIFY, { 'X-Api-Key': 'ak_unknown', 'X-Timestamp': ts, 'X-Nonce': 'n1', 'X-Signature': 'a'.repeat(64) }, '{}');
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ success: false, code: 'INVALID_API_KEY', message: expect.any(String) });
  });

  it('a missing X-Api-Key: 401 MISSING_AUTH_HEADER naming it', async () => {
    const ts = now();
    const reply = await rawPost(VERIFY, { 'X-Timestamp': ts, 'X-Nonce': 'n1', 'X-Signature': 'a'.repeat(64) }, '{}');
    expect(reply.status).toBe(401);
    expect(reply.json).toEqual({ success: false, code: 'MISSING_AUTH_HEADER', message: expect.any(String), field: 'X-Api-Key' });
  });

  it('with only the key, answers with empty lines and false, false', async () => {
    const reply = await rawPost(VERIFY, { 'X-Api-Key': merchant.apiKey }, 'hello');
    expect(expectOk(reply)).toEqual({
      string_to_sign_lines: ['', '', VERIFY, 'hello'],
      string_to_sign: `\n\n${VERIFY}\nhello`,
      signature_matches: false,
      timestamp_within_tolerance: false,
    });
  });

  it.each([
    ['plain text', 'hello'],
    ['an empty body', ''],
    ['not JSON', '{"unterminated":'],
    ['a JSON array', '[1,2,3]'],
    ['pretty-printed JSON with CRLF and trailing line feeds', '{\r\n  "a" : 1 ,\r\n  "b":[ ]\r\n}\n\n'],
    ['a duplicate key', '{"a":1,"a":2}'],
    ['backslashes and escapes left as sent', '{"s":"\\u00e9\\n\\"q\\""}'],
    ['tabs and spaces', '\t  \t'],
    ['accents', 'héllo wörld, ça va'],
    ['CJK and full-width digits', '充值 １２３'],
    ['emoji and a ZWJ sequence', '🎮💎 👩‍💻'],
    ['RTL text and marks', 'مرحبا\u200f \u202eabc'],
    ['combining characters', 'e\u0301 a\u030a Z\u0351\u0352'],
    ['a NUL byte', 'a\u0000b'],
  ])('reflects %s byte for byte, and the signature over it matches', async (_name, body) => {
    const data = expectOk(await verify(body));
    expect(data.string_to_sign_lines[3]).toBe(body);
    expect(Buffer.from(data.string_to_sign_lines[3], 'utf8').equals(Buffer.from(body, 'utf8'))).toBe(true);
    expect(data.string_to_sign.endsWith(`\n${VERIFY}\n${body}`)).toBe(true);
    expect(data.string_to_sign.split('\n').slice(0, 3)).toEqual(data.string_to_sign_lines.slice(0, 3));
    expect(data.signature_matches).toBe(true);
  });

  it('signs the exact bytes: the same text as NFC and as NFD differ', async () => {
    const nfc = '{"name":"\u00e9"}';
    const nfd = '{"name":"e\u0301"}';
    const ts = now();
    const n = nonce();
    const signedNfc = hmac(merchant.appSecret, ts, n, VERIFY, Buffer.from(nfc));
    expect(expectOk(await verify(nfc, { ts, nonce: n, signature: signedNfc })).signature_matches).toBe(true);
    const data = expectOk(await verify(nfd, { ts, nonce: n, signature: signedNfc }));
    expect(data.signature_matches).toBe(false);
    expect(data.string_to_sign_lines[3]).toBe(nfd);
  });

  it('is still refused with a query string: 400 QUERY_NOT_ALLOWED', async () => {
    const reply = await signedFetch(service, merchant, { path: VERIFY, body: '{}', query: '?debug=1' });
    expect({ status: reply.status, code: reply.body.code }).toEqual({ status: 400, code: 'QUERY_NOT_ALLOWED' });
  });
});
