import { createHmac } from 'node:crypto';
import { createServer, IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import { MerchantClient, UNEXPECTED_RESPONSE } from './merchant-client';
import { verifyCallback } from './signing';

const API_KEY = 'key-1';
const SECRET = 's3cr3t-app-secret';
const NOW_MS = 1_767_225_600_750; // 0.75 s past a whole second: the timestamp must round down

interface Sent {
  url: string;
  method: string;
  headers: Headers;
  bytes: Buffer;
}

/**
 * A fetch that records what would go on the wire (through a real `Request`, so
 * the body is serialised exactly as fetch would) and answers with a canned reply.
 */
function fakeFetch(reply: () => Response = () => json(200, { success: true, code: 'OK', data: {} })) {
  const sent: Sent[] = [];
  const fetch = jest.fn(async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    sent.push({ url: request.url, method: request.method, headers: request.headers, bytes: Buffer.from(await request.arrayBuffer()) });
    return reply();
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, sent };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });
}

function client(fetch: typeof globalThis.fetch, baseUrl = 'https://topup.example.com') {
  return new MerchantClient({ baseUrl, apiKey: API_KEY, appSecret: SECRET, fetch, clock: () => NOW_MS });
}

/** The signature recomputed, independently of signing.ts, from what the fake fetch received. */
function expectSignedAsSent(request: Sent) {
  const path = new URL(request.url).pathname;
  const ts = request.headers.get('x-timestamp');
  const nonce = request.headers.get('x-nonce');
  const expected = createHmac('sha256', SECRET)
    .update(Buffer.concat([Buffer.from(`${ts}\n${nonce}\n${path}\n`), request.bytes]))
    .digest('hex');
  expect(request.headers.get('x-signature')).toBe(expected);
}

describe('MerchantClient', () => {
  it.each<[string, (c: MerchantClient) => Promise<unknown>, string, string]>([
    ['products', (c) => c.products(), '/api/v2/products', '{}'],
    ['balance', (c) => c.balance(), '/api/v2/balance', '{}'],
    [
      'submit',
      (c) => c.submit({ out_trade_no: 'A-1', sku_id: 'mlbb-86', account_id: '12345678', account_fields: { server_id: '2001' } }),
      '/api/v2/topup/submit',
      '{"out_trade_no":"A-1","sku_id":"mlbb-86","account_id":"12345678","account_fields":{"server_id":"2001"}}',
    ],
    ['query by out_trade_no', (c) => c.query({ out_trade_no: 'A-1' }), '/api/v2/topup/query', '{"out_trade_no":"A-1"}'],
    ['query by order_no', (c) => c.query({ order_no: 'T01' }), '/api/v2/topup/query', '{"order_no":"T01"}'],
    ['verifySignature', (c) => c.verifySignature(), '/api/v2/tools/verify-signature', '{}'],
    ['verifySignature with a body', (c) => c.verifySignature({ a: 'é' }), '/api/v2/tools/verify-signature', '{"a":"é"}'],
  ])('%s: POSTs the signed bytes to the right URL with the four headers', async (_name, call, path, body) => {
    const { fetch, sent } = fakeFetch();
    await call(client(fetch, 'https://topup.example.com/'));

    expect(sent).toHaveLength(1);
    const [request] = sent;
    expect(request.method).toBe('POST');
    expect(request.url).toBe(`https://topup.example.com${path}`);
    expect(request.bytes.toString('utf8')).toBe(body);
    expect(request.headers.get('content-type')).toBe('application/json');
    expect(request.headers.get('x-api-key')).toBe(API_KEY);
    expect(request.headers.get('x-timestamp')).toBe('1767225600');
    expect(request.headers.get('x-nonce')).toMatch(/^[0-9a-f]{32}$/);
    expectSignedAsSent(request);
  });

  it('uses a fresh nonce for every request', async () => {
    const { fetch, sent } = fakeFetch();
    const c = client(fetch);
    await c.balance();
    await c.balance();
    expect(sent[0].headers.get('x-nonce')).not.toBe(sent[1].headers.get('x-nonce'));
  });

  it('serialises an object body exactly once and sends those bytes', async () => {
    const { fetch, sent } = fakeFetch();
    let serialised = 0;
    const body = {
      out_trade_no: 'A-1',
      note: 'Café 🎮',
      toJSON() {
        serialised += 1;
        return { out_trade_no: 'A-1', note: 'Café 🎮', n: serialised };
      },
    };
    await client(fetch).request('/api/v2/topup/submit', body);
    expect(serialised).toBe(1);
    expect(sent[0].bytes.toString('utf8')).toBe('{"out_trade_no":"A-1","note":"Café 🎮","n":1}');
    expectSignedAsSent(sent[0]);
  });

  it('sends a raw string body unchanged: no re-serialisation, whitespace and escapes kept', async () => {
    const { fetch, sent } = fakeFetch();
    const raw = '{ "out_trade_no" : "A-1",\r\n  "note": "caf\\u00e9 é" }\n';
    await client(fetch).request('/api/v2/topup/submit', raw);
    expect(sent[0].bytes.equals(Buffer.from(raw, 'utf8'))).toBe(true);
    expectSignedAsSent(sent[0]);
  });

  it('sends a Buffer body byte for byte, even bytes that are not UTF-8', async () => {
    const { fetch, sent } = fakeFetch();
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0xe9, 0x7d]);
    await client(fetch).request('/api/v2/tools/verify-signature', raw);
    expect(sent[0].bytes.equals(raw)).toBe(true);
    expectSignedAsSent(sent[0]);
  });

  it('takes the timestamp, nonce and extra headers from the options', async () => {
    const { fetch, sent } = fakeFetch();
    await client(fetch).request('/api/v2/tools/verify-signature', '{}', { timestamp: 1700000000, nonce: 'n-1', headers: { 'X-Trace': 't' } });
    expect(sent[0].headers.get('x-timestamp')).toBe('1700000000');
    expect(sent[0].headers.get('x-nonce')).toBe('n-1');
    expect(sent[0].headers.get('x-trace')).toBe('t');
    expectSignedAsSent(sent[0]);
  });

  it('refuses a path that does not start with "/"', async () => {
    const { fetch } = fakeFetch();
    await expect(client(fetch).request('api/v2/balance', {})).rejects.toThrow(TypeError);
  });

  describe('replies', () => {
    it('resolves a success with status, body and headers', async () => {
      const order = { order_no: 'T01', out_trade_no: 'A-1', status: 'processing', amount: '1.20' };
      const { fetch } = fakeFetch(() => json(202, { success: true, code: 'ACCEPTED', data: order }, { 'X-Request-Id': 'r-1' }));
      const result = await client(fetch).submit({ out_trade_no: 'A-1', sku_id: 'mlbb-86', account_id: '12345678', account_fields: {} });
      expect(result.status).toBe(202);
      expect(result.body).toEqual({ success: true, code: 'ACCEPTED', data: order });
      expect(result.headers.get('x-request-id')).toBe('r-1');
      if (result.body.success) expect(typeof result.body.data.amount).toBe('string');
    });

    it.each([
      [401, { success: false, code: 'INVALID_SIGNATURE', message: 'Bad signature' }],
      [402, { success: false, code: 'INSUFFICIENT_BALANCE', message: 'Insufficient balance' }],
      [404, { success: false, code: 'ORDER_NOT_FOUND', message: 'No such order' }],
      [409, { success: false, code: 'OUT_TRADE_NO_CONFLICT', message: 'Used with another target' }],
      [422, { success: false, code: 'VALIDATION_FAILED', message: 'Bad format', field: 'out_trade_no' }],
      [500, { success: false, code: 'INTERNAL_ERROR', message: 'Try again' }],
    ])('resolves (never throws) a %i with the failure envelope', async (status, body) => {
      const { fetch } = fakeFetch(() => json(status, body));
      const result = await client(fetch).query({ out_trade_no: 'A-1' });
      expect(result.status).toBe(status);
      expect(result.body).toEqual(body);
    });

    it('passes Retry-After of a 429 through', async () => {
      const { fetch } = fakeFetch(() => json(429, { success: false, code: 'RATE_LIMITED', message: 'Slow down' }, { 'Retry-After': '2' }));
      const result = await client(fetch).balance();
      expect(result.status).toBe(429);
      expect(result.headers.get('retry-after')).toBe('2');
    });

    it.each([
      ['an HTML error page', () => new Response('<html>Bad Gateway</html>', { status: 502 })],
      ['an empty body', () => new Response(null, { status: 504 })],
      ['JSON that is not the envelope', () => json(200, [1, 2])],
    ])(`resolves ${UNEXPECTED_RESPONSE} for %s`, async (_name, reply) => {
      const { fetch } = fakeFetch(reply);
      const result = await client(fetch).balance();
      expect(result.body).toMatchObject({ success: false, code: UNEXPECTED_RESPONSE });
    });

    it('rejects on a network error', async () => {
      const fetch = jest.fn(async () => {
        throw new TypeError('fetch failed');
      }) as unknown as typeof globalThis.fetch;
      await expect(client(fetch).balance()).rejects.toThrow('fetch failed');
    });
  });

  it('over real HTTP with the global fetch, the server receives bytes whose signature verifies', async () => {
    const received: Array<{ url: string; headers: IncomingHttpHeaders; body: Buffer }> = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"success":false,"code":"NONCE_REUSED","message":"Nonce already used"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const real = new MerchantClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: API_KEY, appSecret: SECRET });
      const result = await real.submit({ out_trade_no: 'A-1', sku_id: 'mlbb-86', account_id: 'Zoë-1', account_fields: { server_id: '2001' } });

      expect(result.status).toBe(401);
      expect(result.body).toEqual({ success: false, code: 'NONCE_REUSED', message: 'Nonce already used' });
      const [request] = received;
      expect(request.url).toBe('/api/v2/topup/submit');
      expect(request.body.toString('utf8')).toBe('{"out_trade_no":"A-1","sku_id":"mlbb-86","account_id":"Zoë-1","account_fields":{"server_id":"2001"}}');
      expect(request.headers['content-type']).toBe('application/json');
      // Requests and callbacks are signed the same way, so the callback verifier checks a request too.
      expect(verifyCallback({ appSecret: SECRET, path: request.url, headers: request.headers, rawBody: request.body })).toEqual({ ok: true });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
