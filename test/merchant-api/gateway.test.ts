import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { ReplayGuard } from '../../src/merchant-api/gateway/replay-guard';
import { provisionMerchant, signedFetch, TestMerchant, timestampFromNow } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase, startService } from '../support/service';
import { intoSecond } from '../support/until';

/**
 * The contract's error list, rows 1-8, and spec §5, over real HTTP against
 * the running service: each check, and that they run in the contract's order.
 */
describe('merchant API gateway', () => {
  let service: RunningService;
  let merchant: TestMerchant;
  let teardown: () => Promise<void>;
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    merchant = await provisionMerchant(service);
  });
  afterAll(async () => teardown());

  const raw = (path: string, init: RequestInit = {}) =>
    fetch(`${service.url}${path}`, init).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.json() }));

  describe('1. unknown routes and every /api/v1 route: 404 NOT_FOUND', () => {
    it.each([
      ['/api/v1/topup/submit', 'POST'],
      ['/api/v1/check-account', 'POST'],
      ['/api/v1/anything/else', 'GET'],
      ['/api/v2/unknown', 'POST'],
      ['/api/v2/balance/', 'POST'],
      ['/API/V2/balance', 'POST'],
      ['/api/v2/%62alance', 'POST'],
      ['/api/v3/balance', 'POST'],
      ['/nowhere', 'GET'],
    ])('%s (%s)', async (path, method) => {
      const reply = await raw(path, { method, body: method === 'POST' ? '{}' : undefined });
      expect(reply.status).toBe(404);
      expect(reply.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
    });

    it('answers 404 for /api/v1 before anything else, even with a query string and no auth', async () => {
      expect((await raw('/api/v1/topup/query?x=1', { method: 'GET' })).status).toBe(404);
    });
  });

  describe('2. another method on a v2 route: 405 METHOD_NOT_ALLOWED', () => {
    it.each(['GET', 'PUT', 'PATCH', 'DELETE'])('%s', async (method) => {
      const reply = await raw('/api/v2/balance?also=query', { method, body: ['GET'].includes(method) ? undefined : '{}' });
      expect(reply.status).toBe(405);
      expect(reply.body).toMatchObject({ success: false, code: 'METHOD_NOT_ALLOWED' });
      expect(reply.headers.get('allow')).toBe('POST');
    });
  });

  describe('3. any query string: 400 QUERY_NOT_ALLOWED, before authentication', () => {
    it.each(['?a=1', '?order_no=T1'])('%s', async (query) => {
      const unsigned = await raw(`/api/v2/topup/query${query}`, { method: 'POST', body: '{}' });
      expect(unsigned.status).toBe(400);
      expect(unsigned.body).toMatchObject({ code: 'QUERY_NOT_ALLOWED' });
      const signed = await signedFetch(service, merchant, { path: '/api/v2/balance', query });
      expect(signed.body).toMatchObject({ code: 'QUERY_NOT_ALLOWED' });
    });

    it('a bare "?" (sent byte for byte: fetch would drop it)', async () => {
      const { port } = new URL(service.url);
      const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/api/v2/balance?', method: 'POST' }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.end('{}');
      });
      expect(reply.status).toBe(400);
      expect(JSON.parse(reply.body)).toMatchObject({ code: 'QUERY_NOT_ALLOWED' });
    });
  });

  describe('4. body over 64 KiB: 413 PAYLOAD_TOO_LARGE, before authentication', () => {
    it('refuses 64 KiB + 1 byte', async () => {
      const body = JSON.stringify({ pad: 'x'.repeat(64 * 1024) });
      const reply = await raw('/api/v2/topup/submit', { method: 'POST', body });
      expect(reply.status).toBe(413);
      expect(reply.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    });

    it('lets exactly 64 KiB through to the next check', async () => {
      const prefix = '{"pad":"';
      const body = prefix + 'x'.repeat(64 * 1024 - prefix.length - 2) + '"}';
      expect(Buffer.byteLength(body)).toBe(64 * 1024);
      const reply = await signedFetch(service, merchant, { path: '/api/v2/balance', body });
      expect(reply.status).toBe(422);
      expect(reply.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'pad' });
    });
  });

  describe('5. authentication: 401', () => {
    it.each(['X-Api-Key', 'X-Timestamp', 'X-Nonce', 'X-Signature'])('missing %s: MISSING_AUTH_HEADER naming it', async (header) => {
      const reply = await signedFetch(service, merchant, { path: '/api/v2/balance', headers: { [header]: '' } });
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({ success: false, code: 'MISSING_AUTH_HEADER', message: expect.any(String), field: header });
    });

    it('a missing header is reported before an unknown key', async () => {
      const reply = await signedFetch(service, { ...merchant, apiKey: 'ak_unknown' }, { path: '/api/v2/balance', headers: { 'X-Signature': '' } });
      expect(reply.body).toMatchObject({ code: 'MISSING_AUTH_HEADER', field: 'X-Signature' });
    });

    it('unknown key: INVALID_API_KEY', async () => {
      const reply = await signedFetch(service, { ...merchant, apiKey: 'ak_unknown' }, { path: '/api/v2/balance' });
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ code: 'INVALID_API_KEY' });
    });

    it.each([
      ['301 s ago', () => timestampFromNow(-301)],
      ['301 s ahead', () => timestampFromNow(301)],
      ['not an integer', () => `${now()}.5`],
      ['milliseconds', () => String(Date.now())],
      ['words', () => 'yesterday'],
      ['negative', () => '-5'],
    ])('timestamp %s: TIMESTAMP_EXPIRED', async (_, timestamp) => {
      const reply = await signedFetch(service, merchant, { path: '/api/v2/balance', timestamp: timestamp() });
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ code: 'TIMESTAMP_EXPIRED' });
    });

    it.each([
      ['299 s ago', -299],
      ['299 s ahead', 299],
    ])('timestamp %s passes', async (_, offset) => {
      const reply = await signedFetch(service, merchant, { path: '/api/v2/balance', timestamp: timestampFromNow(offset) });
      expect(reply.status).toBe(200);
    });

    type Signed = { timestamp: string; nonce: string; path: string; body: string };
    const sign = (ts: string, nonce: string, path: string, body: string) =>
      createHmac('sha256', merchant.appSecret).update(`${ts}\n${nonce}\n${path}\n${body}`).digest('hex');

    it.each([
      ['the timestamp', (s: Signed) => ({ ...s, timestamp: String(Number(s.timestamp) - 1) })],
      ['the nonce', (s: Signed) => ({ ...s, nonce: `${s.nonce}x` })],
      ['the path', (s: Signed) => ({ ...s, path: '/api/v2/products' })],
      ['the body', (s: Signed) => ({ ...s, body: '{ }' })],
    ])('tampering with %s after signing: INVALID_SIGNATURE', async (_, tamper) => {
      const signed: Signed = { timestamp: String(now()), nonce: `tamper-${Math.random()}`, path: '/api/v2/balance', body: '{}' };
      const signature = sign(signed.timestamp, signed.nonce, signed.path, signed.body);
      const reply = await signedFetch(service, merchant, { ...tamper(signed), signature });
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ code: 'INVALID_SIGNATURE' });
    });

    it('uppercase hex, a truncated or a wrong-length signature: INVALID_SIGNATURE', async () => {
      const ts = String(now());
      const good = sign(ts, 'case-1', '/api/v2/balance', '{}');
      for (const signature of [good.toUpperCase(), good.slice(0, 63), `${good}00`, 'zz']) {
        const reply = await signedFetch(service, merchant, { path: '/api/v2/balance', timestamp: ts, nonce: 'case-1', signature });
        expect(reply.body).toMatchObject({ code: 'INVALID_SIGNATURE' });
      }
    });

    it('a replayed nonce: NONCE_REUSED; a request that failed its signature consumed none', async () => {
      const nonce = `replay-${Math.random()}`;
      const bad = await signedFetch(service, merchant, { path: '/api/v2/balance', nonce, signature: '0'.repeat(64) });
      expect(bad.body).toMatchObject({ code: 'INVALID_SIGNATURE' });
      const first = await signedFetch(service, merchant, { path: '/api/v2/balance', nonce });
      expect(first.status).toBe(200);
      const replay = await signedFetch(service, merchant, { path: '/api/v2/balance', nonce });
      expect(replay.status).toBe(401);
      expect(replay.body).toMatchObject({ code: 'NONCE_REUSED' });
    });

    it('one captured request sent many times at once is served once, the copies admitted together or not', async () => {
      for (let round = 0; round < 5; round++) {
        const call = { path: '/api/v2/balance', nonce: `burst-${round}-${Math.random()}`, timestamp: String(Math.floor(Date.now() / 1000)) };
        const replies = await Promise.all(Array.from({ length: 12 }, () => signedFetch(service, merchant, call)));
        expect(replies.map((r) => r.status).sort()).toEqual([200, ...Array(11).fill(401)]);
        expect(replies.filter((r) => r.status === 401).every((r) => r.body.code === 'NONCE_REUSED')).toBe(true);
      }
    });

    it('a nonce is per merchant', async () => {
      const other = await provisionMerchant(service);
      const nonce = `shared-${Math.random()}`;
      expect((await signedFetch(service, merchant, { path: '/api/v2/balance', nonce })).status).toBe(200);
      expect((await signedFetch(service, other, { path: '/api/v2/balance', nonce })).status).toBe(200);
    });

    it('a nonce of 129 characters or with non-ASCII: INVALID_NONCE', async () => {
      for (const nonce of ['n'.repeat(129), 'caf\u00e9']) {
        const reply = await signedFetch(service, merchant, { path: '/api/v2/balance', nonce });
        expect(reply.status).toBe(401);
        expect(reply.body).toMatchObject({ code: 'INVALID_NONCE', field: 'X-Nonce' });
      }
      expect((await signedFetch(service, merchant, { path: '/api/v2/balance', nonce: `n${'x'.repeat(127)}` })).status).toBe(200);
    });

    it('purges nonces whose window has passed, and only those', async () => {
      await service.pool.query(
        `insert into merchant_nonces (merchant_id, nonce, expires_at) values ($1, 'old-one', now() - interval '1 second'), ($1, 'live-one', now() + interval '5 minutes')`,
        [merchant.merchantId],
      );
      const purged = await new ReplayGuard(service.pool).purgeExpired();
      expect(purged).toBeGreaterThanOrEqual(1);
      const { rows } = await service.pool.query(`select nonce from merchant_nonces where nonce in ('old-one', 'live-one')`);
      expect(rows.map((r) => r.nonce)).toEqual(['live-one']);
    });

    it('remembers nonces until at least their timestamp + 300 s', async () => {
      const nonce = `kept-${Math.random()}`;
      const timestamp = String(now() - 100);
      await signedFetch(service, merchant, { path: '/api/v2/balance', nonce, timestamp });
      const { rows } = await service.pool.query(`select extract(epoch from expires_at)::bigint as expires from merchant_nonces where nonce = $1`, [nonce]);
      expect(Number(rows[0].expires)).toBeGreaterThanOrEqual(Number(timestamp) + 300);
    });
  });

  describe('6. 403', () => {
    it('a suspended merchant: MERCHANT_SUSPENDED', async () => {
      const suspended = await provisionMerchant(service, { status: 'suspended' });
      const reply = await signedFetch(service, suspended, { path: '/api/v2/balance' });
      expect(reply.status).toBe(403);
      expect(reply.body).toMatchObject({ code: 'MERCHANT_SUSPENDED' });
    });

    it.each([
      [['127.0.0.1'], 200],
      [['127.0.0.0/8'], 200],
      [['10.0.0.0/8', '127.0.0.1/32'], 200],
      [['10.0.0.0/8'], 403],
      [['::1'], 403],
      [['2001:db8::/32'], 403],
    ])('whitelist %j from 127.0.0.1: %i', async (whitelist, status) => {
      const m = await provisionMerchant(service, { ipWhitelist: whitelist });
      const reply = await signedFetch(service, m, { path: '/api/v2/balance' });
      expect(reply.status).toBe(status);
      if (status === 403) expect(reply.body).toMatchObject({ code: 'IP_NOT_ALLOWED' });
    });

    it('a forged X-Forwarded-For does not help without TRUST_PROXY', async () => {
      const m = await provisionMerchant(service, { ipWhitelist: ['10.1.2.3'] });
      const reply = await signedFetch(service, m, { path: '/api/v2/balance', headers: { 'X-Forwarded-For': '10.1.2.3' } });
      expect(reply.body).toMatchObject({ code: 'IP_NOT_ALLOWED' });
    });
  });

  describe('7. over the rate limit: 429 RATE_LIMITED with Retry-After', () => {
    it('limits per merchant and per second', async () => {
      const limited = await provisionMerchant(service, { rateLimit: 3 });
      const replies = await Promise.all(Array.from({ length: 8 }, () => signedFetch(service, limited, { path: '/api/v2/balance' })));
      const refused = replies.filter((r) => r.status === 429);
      expect(refused.length).toBeGreaterThanOrEqual(5 - 3); // a window boundary may split the burst
      expect(replies.filter((r) => r.status === 200).length).toBeLessThanOrEqual(6);
      for (const r of refused) {
        expect(r.body).toMatchObject({ code: 'RATE_LIMITED' });
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      // Another merchant is not affected.
      expect((await signedFetch(service, merchant, { path: '/api/v2/balance' })).status).toBe(200);
    });
  });

  describe('8. body not a JSON object: 400 INVALID_JSON', () => {
    it.each([
      ['invalid JSON', '{'],
      ['an array', '[]'],
      ['a string', '"x"'],
      ['null', 'null'],
      ['empty', ''],
      ['duplicate keys', '{"a":1,"a":2}'],
      ['nested duplicate keys', '{"account_fields":{"s":"1","s":"2"}}'],
    ])('%s', async (_, body) => {
      const reply = await signedFetch(service, merchant, { path: '/api/v2/topup/submit', body });
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ success: false, code: 'INVALID_JSON' });
    });

    it('ignores a leading byte-order mark, as RFC 8259 allows', async () => {
      const reply = await signedFetch(service, merchant, { path: '/api/v2/topup/submit', body: '\ufeff{}' });
      expect(reply.body).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', field: 'out_trade_no' });
    });

    it('treats the body as JSON whatever the Content-Type says', async () => {
      const reply = await signedFetch(service, merchant, { path: '/api/v2/balance', headers: { 'Content-Type': 'text/plain' } });
      expect(reply.status).toBe(200);
    });
  });

  describe('the order of the checks', () => {
    it('404 before 405 before 400 before 413 before 401', async () => {
      expect((await raw('/api/v2/nope?x', { method: 'GET' })).status).toBe(404);
      expect((await raw('/api/v2/balance?x', { method: 'GET' })).status).toBe(405);
      expect((await raw('/api/v2/balance?x', { method: 'POST', body: 'x'.repeat(70_000) })).status).toBe(400);
      expect((await raw('/api/v2/balance', { method: 'POST', body: 'x'.repeat(70_000) })).status).toBe(413);
      expect((await raw('/api/v2/balance', { method: 'POST', body: '{}' })).status).toBe(401);
    });

    it('401 before 403 before 429 before 400 INVALID_JSON', async () => {
      const suspended = await provisionMerchant(service, { status: 'suspended', rateLimit: 1 });
      expect((await signedFetch(service, suspended, { path: '/api/v2/topup/submit', body: '[', signature: 'x' })).status).toBe(401);
      const replies = await Promise.all(Array.from({ length: 3 }, () => signedFetch(service, suspended, { path: '/api/v2/topup/submit', body: '[' })));
      expect(replies.map((r) => r.status)).toEqual([403, 403, 403]);
      const limited = await provisionMerchant(service, { rateLimit: 1 });
      // The limit counts whole Unix seconds: the burst goes early in one, so a loaded machine does
      // not spread it over two (each request then counted in its own second's window).
      await intoSecond(5, 95);
      const bursts = await Promise.all(Array.from({ length: 4 }, () => signedFetch(service, limited, { path: '/api/v2/topup/submit', body: '[' })));
      expect(new Set(bursts.map((r) => r.status))).toEqual(new Set([400, 429]));
    });
  });

  it('10. anything unexpected: 500 INTERNAL_ERROR without internals; the same request then succeeds unchanged', async () => {
    const call = { path: '/api/v2/topup/query', body: JSON.stringify({ out_trade_no: 'never-placed' }), nonce: `retry-${Math.random()}` };
    await service.pool.query('alter table rm_orders rename to rm_orders_away');
    let failed;
    try {
      failed = await signedFetch(service, merchant, call);
    } finally {
      await service.pool.query('alter table rm_orders_away rename to rm_orders');
    }
    expect(failed.status).toBe(500);
    expect(failed.body).toEqual({ success: false, code: 'INTERNAL_ERROR', message: expect.any(String) });
    expect(JSON.stringify(failed.body)).not.toMatch(/rm_orders|relation|\.ts/);
    const retried = await signedFetch(service, merchant, call);
    expect(retried.status).toBe(404);
    expect(retried.body).toMatchObject({ code: 'ORDER_NOT_FOUND' });
  });

  it('every reply carries the envelope and no stack trace', async () => {
    const reply = await signedFetch(service, merchant, { path: '/api/v2/topup/submit', body: '{"out_trade_no":5}' });
    expect(Object.keys(reply.body).sort()).toEqual(['code', 'field', 'message', 'success']);
    expect(JSON.stringify(reply.body)).not.toMatch(/\bat \w+ \(|\.ts:\d+/);
  });
});

describe('merchant API gateway behind a trusted proxy', () => {
  it('takes the client address from X-Forwarded-For only for the trusted hops', async () => {
    const { db, service, teardown } = await serviceOnFreshDatabase();
    await service.stop();
    const proxied = await startService(db, { TRUST_PROXY: '1' });
    try {
      const m = await provisionMerchant(proxied, { ipWhitelist: ['10.1.2.3'] });
      const viaProxy = await signedFetch(proxied, m, { path: '/api/v2/balance', headers: { 'X-Forwarded-For': '10.1.2.3' } });
      expect(viaProxy.status).toBe(200);
      // The client forged the first entry; the trusted proxy appended the real one.
      const forged = await signedFetch(proxied, m, { path: '/api/v2/balance', headers: { 'X-Forwarded-For': '10.1.2.3, 192.0.2.7' } });
      expect(forged.body).toMatchObject({ code: 'IP_NOT_ALLOWED' });
    } finally {
      await proxied.stop();
      await db.drop();
      void teardown;
    }
  });
});
