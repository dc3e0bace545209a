import { hmacSha256Hex, newNonce, sign as signInPage, stringToSign } from '../../src/api-docs/page/signing';
import { sign } from '../../src/merchant-client/signing';

/**
 * The page's signing helper (WebCrypto, as the browser runs it) against the
 * merchant client's (node:crypto), the one docs/signing.md and the examples
 * hold to the service: the same signature for the same request, bodies with
 * UTF-8 text and line feeds included. The browser test sends its requests to
 * the real service.
 */
describe("the /docs page's signing helper", () => {
  const secret = 'a3f1c2d4e5b6978800112233445566778899aabbccddeeff0011223344556677';
  it.each([
    ['{}'],
    ['{"out_trade_no":"A-1","sku_id":"mlbb-86","account_id":"12345678","account_fields":{"server_id":"2001"}}'],
    ['{"note":"café ☕ 😀"}'],
    ['{\n  "a": "line\\nfeed"\n}\n'],
    [''],
  ])('signs %j as the merchant client does', async (body) => {
    expect(await hmacSha256Hex(secret, stringToSign('1767225600', 'n-1', '/api/v2/topup/submit', body))).toBe(
      sign(secret, '1767225600', 'n-1', '/api/v2/topup/submit', body),
    );
  });

  it('gives the four headers: Unix seconds, a fresh nonce of 32 hex digits, and the signature over them', async () => {
    const headers = await signInPage({ apiKey: 'ak_1', appSecret: secret }, '/api/v2/balance', '{}', 1_767_225_600_999);
    expect(headers).toEqual({
      'X-Api-Key': 'ak_1',
      'X-Timestamp': '1767225600',
      'X-Nonce': expect.stringMatching(/^[0-9a-f]{32}$/),
      'X-Signature': sign(secret, '1767225600', headers['X-Nonce'], '/api/v2/balance', '{}'),
    });
    expect(newNonce()).not.toBe(newNonce());
  });
});
