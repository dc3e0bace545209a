import type { IncomingMessage, ServerResponse } from 'node:http';
import { SecurityHeaders } from './security-headers';

/** The headers apply sets for a request to `url` with these request headers. */
function headersFor(securityHeaders: SecurityHeaders, url: string, requestHeaders: Record<string, string> = {}): Record<string, string> {
  const set: Record<string, string> = {};
  const response = { setHeader: (name: string, value: string) => (set[name.toLowerCase()] = value), removeHeader: () => undefined };
  const request = { url, headers: requestHeaders, socket: {} } as unknown as IncomingMessage;
  securityHeaders.apply(request, response as unknown as ServerResponse);
  return set;
}

const API = "default-src 'none';frame-ancestors 'none'";
const DOCS =
  "default-src 'none';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none'";
const CONSOLE =
  "default-src 'none';script-src 'self';style-src 'self';img-src 'self';connect-src 'self';form-action 'self';frame-ancestors 'none';base-uri 'none'";

describe('SecurityHeaders', () => {
  const headers = new SecurityHeaders(0);

  it.each([
    ['/api/v2/topup/submit', API],
    ['/console', CONSOLE],
    ['/console/', CONSOLE],
    ['/console/assets/console.js?v=1', CONSOLE],
    ['/favicon.ico', CONSOLE],
    ['/consolex', API],
    ['/docs', DOCS],
    ['/docs/?x', DOCS],
    ['/docs/assets/swagger-ui-bundle.js', DOCS],
    ['/docs/merchant-api.json', API],
    ['/docsx', API],
    ['http://example.com/console', API],
    ['', API],
  ])('%s gets the policy of its surface, the strictest when no surface claims it', (url, policy) => {
    expect(headersFor(headers, url)['content-security-policy']).toBe(policy);
  });

  it('sets the same headers on every surface but the policy, and the opener policy on pages only', () => {
    const common = {
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'cross-origin-resource-policy': 'same-origin',
      'cache-control': 'no-store',
    };
    expect(headersFor(headers, '/api/v2/balance')).toEqual({ ...common, 'content-security-policy': API });
    expect(headersFor(headers, '/console')).toEqual({ ...common, 'content-security-policy': CONSOLE, 'cross-origin-opener-policy': 'same-origin' });
  });

  it('adds HSTS when the request came over TLS: directly, or as the trusted proxy says', () => {
    expect(headersFor(new SecurityHeaders(1), '/health', { 'x-forwarded-proto': 'https' })['strict-transport-security']).toBe('max-age=31536000');
    expect(headersFor(new SecurityHeaders(1), '/health', { 'x-forwarded-proto': 'http' })['strict-transport-security']).toBeUndefined();
    expect(headersFor(new SecurityHeaders(0), '/health', { 'x-forwarded-proto': 'https' })['strict-transport-security']).toBeUndefined();
    const direct = { url: '/health', headers: {}, socket: { encrypted: true } } as unknown as IncomingMessage;
    const set: Record<string, string> = {};
    new SecurityHeaders(0).apply(direct, { setHeader: (name: string, value: string) => (set[name] = value) } as unknown as ServerResponse);
    expect(set['Strict-Transport-Security']).toBe('max-age=31536000');
  });

  it('gives the raw refusals the API surface headers as header lines, without HSTS', () => {
    expect(headers.rawLines.split('\r\n')).toEqual([
      `Content-Security-Policy: ${API}`,
      'Cross-Origin-Resource-Policy: same-origin',
      'Referrer-Policy: no-referrer',
      'X-Content-Type-Options: nosniff',
      'X-Frame-Options: DENY',
      'Cache-Control: no-store',
      '',
    ]);
  });
});
