import { CALLBACK_ENV, callbackEndpoint } from '../support/callback-endpoint';
import { freePort } from '../support/child-service';
import { awaitFinal, FULFILMENT_ENV_EVERY_ORDER_ENDS } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { parseSamples, sample } from '../support/prometheus-text';

const scrape = async (url: string, headers: Record<string, string> = {}) => {
  const reply = await fetch(`${url}/metrics`, { headers });
  expect(reply.status).toBe(200);
  expect(reply.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseSamples(await reply.text());
};

const submit = (service: RunningService, merchant: TestMerchant, outTradeNo: string, accountId = '12345678') =>
  signedFetch(service, merchant, {
    path: '/api/v2/topup/submit',
    body: JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'mlbb-86', account_id: accountId, account_fields: { server_id: '1' } }),
  });

describe('GET /metrics', () => {
  // A database per test: what one test leaves unfinished must not move the next one's counts.
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await db.drop();
  });

  it('counts submits by outcome and HTTP requests by route pattern, and shows the fulfilment backlog while it waits', async () => {
    // Fulfilment off (the tests' default): accepted orders wait in the backlog.
    const service = await startService(db);
    try {
      const merchant = await provisionMerchant(service, { deposit: 250n });
      const before = await scrape(service.url);
      expect((await submit(service, merchant, 'M-1')).status).toBe(202);
      expect((await submit(service, merchant, 'M-2')).status).toBe(202);
      expect((await submit(service, merchant, 'M-1')).status).toBe(200);
      expect((await submit(service, merchant, 'M-3')).status).toBe(402);
      expect((await signedFetch(service, merchant, { path: '/api/v2/topup/submit', body: '{}', signature: 'forged' })).status).toBe(401);
      expect((await signedFetch(service, merchant, { path: '/api/v2/balance' })).status).toBe(200);
      expect((await fetch(`${service.url}/admin/v1/merchants/${merchant.merchantId}`)).status).toBe(401);
      expect((await fetch(`${service.url}/no/such/route`)).status).toBe(404);
      await new Promise((r) => setTimeout(r, 1100)); // the oldest job gets at least a second old
      const after = await scrape(service.url);
      const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);

      expect(moved('topup_submits_total', { outcome: 'ACCEPTED' })).toBe(2);
      expect(moved('topup_submits_total', { outcome: 'DUPLICATE' })).toBe(1);
      expect(moved('topup_submits_total', { outcome: 'INSUFFICIENT_BALANCE' })).toBe(1);
      expect(moved('topup_submits_total', { outcome: 'INVALID_SIGNATURE' })).toBe(1);
      const submitRoute = { method: 'POST', route: '/api/v2/topup/submit' };
      expect(moved('http_requests_total', { ...submitRoute, status: '202' })).toBe(2);
      expect(moved('http_requests_total', { ...submitRoute, status: '401' })).toBe(1);
      expect(moved('http_request_duration_seconds_count', { ...submitRoute, status: '202' })).toBe(2);
      expect(moved('http_requests_total', { method: 'POST', route: '/api/v2/balance', status: '200' })).toBe(1);
      // Route patterns, never raw paths: one series per route whatever the ids.
      expect(moved('http_requests_total', { method: 'GET', route: '/admin/v1/merchants/:merchant_id', status: '401' })).toBe(1);
      expect(moved('http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' })).toBe(1);
      expect([...after.keys()].some((key) => key.includes(merchant.merchantId))).toBe(false);

      expect(sample(after, 'topup_fulfilment_backlog')).toBe(2);
      expect(sample(after, 'topup_fulfilment_oldest_job_age_seconds')).toBeGreaterThanOrEqual(1);
      // Each accepted order is at least one append (its order and wallet streams, together or one after the other).
      expect(moved('event_store_append_duration_seconds_count')).toBeGreaterThanOrEqual(2);
      expect(moved('wallet_batch_size_count')).toBeGreaterThanOrEqual(2);
      // One instance: no other writer for its wallets to lose to.
      expect(sample(after, 'wallet_append_conflicts_total')).toBe(0);
      expect(sample(after, 'pg_pool_connections', { pool: 'main', state: 'idle' })).toBeGreaterThan(0);
      expect(after.has('pg_pool_connections{pool="admission",state="waiting"}')).toBe(true);
      expect(after.has('process_cpu_seconds_total')).toBe(true);
      for (const projection of ['orders', 'wallets', 'order-minutes', 'fulfilment-jobs', 'callback-schedule']) {
        expect(after.has(`projection_lag_events{projection="${projection}"}`)).toBe(true);
        expect(after.has(`projection_lag_seconds{projection="${projection}"}`)).toBe(true);
      }
    } finally {
      await service.stop();
    }
  });

  it('counts orders reaching each final state, upstream requests and callback attempts by outcome; the backlogs drain', async () => {
    const endpoint = await callbackEndpoint((_, attempt) => (attempt === 1 ? { status: 500 } : { status: 200, body: 'success' }));
    const service = await startService(db, { ...FULFILMENT_ENV_EVERY_ORDER_ENDS, ...CALLBACK_ENV, UPSTREAM_SIM_DELAY_MS: '10' });
    try {
      const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url });
      const placed = [await submit(service, merchant, 'F-1'), await submit(service, merchant, 'F-2', '77777000')];
      for (const reply of placed) expect(reply.status).toBe(202);
      const finals = await Promise.all(placed.map((reply) => awaitFinal(service, merchant, reply.body.data.order_no)));
      expect(finals.map((order) => order.status)).toEqual(['success', 'failed']);
      // Each callback is refused once (500), then acknowledged.
      for (let i = 0; i < 100 && endpoint.received.length < 4; i++) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 300));
      const metrics = await scrape(service.url);
      expect(sample(metrics, 'topup_orders_final_total', { status: 'success', fail_code: '' })).toBe(1);
      expect(sample(metrics, 'topup_orders_final_total', { status: 'failed', fail_code: 'INVALID_ACCOUNT' })).toBe(1);
      expect(sample(metrics, 'topup_upstream_requests_total', { outcome: 'delivered' })).toBe(1);
      expect(sample(metrics, 'topup_upstream_requests_total', { outcome: 'refused' })).toBe(1);
      expect(sample(metrics, 'topup_callback_attempts_total', { outcome: 'acknowledged' })).toBe(2);
      expect(sample(metrics, 'topup_callback_attempts_total', { outcome: 'not_acknowledged' })).toBe(2);
      expect(sample(metrics, 'topup_callback_backlog')).toBe(0);
      expect(sample(metrics, 'topup_fulfilment_backlog')).toBe(0);
      // The upstream slots: none held once both orders are final, and the delivered one held its slot at least the simulator's 10 ms.
      expect(sample(metrics, 'topup_fulfilment_slots')).toBe(Number(FULFILMENT_ENV_EVERY_ORDER_ENDS.FULFILMENT_CONCURRENCY));
      expect(sample(metrics, 'topup_fulfilment_in_flight')).toBe(0);
      expect(sample(metrics, 'topup_fulfilment_slot_seconds_total')).toBeGreaterThanOrEqual(0.01);
      expect(sample(metrics, 'projection_lag_events', { projection: 'orders' })).toBe(0);
    } finally {
      await service.stop();
      await endpoint.stop();
    }
  });

  describe('protection', () => {
    it('METRICS_TOKEN: a bearer token is required', async () => {
      const service = await startService(db, { METRICS_TOKEN: 'metrics-token-0123456789' });
      try {
        const none = await fetch(`${service.url}/metrics`);
        expect(none.status).toBe(401);
        expect(none.headers.get('www-authenticate')).toBe('Bearer');
        expect(await none.json()).toEqual({ success: false, code: 'UNAUTHORIZED', message: expect.any(String) });
        expect((await fetch(`${service.url}/metrics`, { headers: { Authorization: 'Bearer metrics-token-wrong-0000' } })).status).toBe(401);
        const metrics = await scrape(service.url, { Authorization: 'Bearer metrics-token-0123456789' });
        expect(metrics.has('process_cpu_seconds_total')).toBe(true);
      } finally {
        await service.stop();
      }
    });

    it('METRICS_PORT: served on that port only, with the token when both are set', async () => {
      const port = await freePort();
      const service = await startService(db, { METRICS_PORT: String(port), METRICS_TOKEN: 'metrics-token-0123456789', HOST: '127.0.0.1' });
      try {
        expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
        const separate = `http://127.0.0.1:${port}`;
        expect((await fetch(`${separate}/metrics`)).status).toBe(401);
        expect((await scrape(separate, { Authorization: 'Bearer metrics-token-0123456789' })).has('http_requests_total')).toBe(false);
        expect((await fetch(`${separate}/api/v2/balance`)).status).toBe(404);
      } finally {
        await service.stop();
      }
      // Closed with the service.
      await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
    });

    it('in production, neither set: /metrics is not served on the API port', async () => {
      const service = await startService(db, { NODE_ENV: 'production', UPSTREAM_URL: 'http://127.0.0.1:1', LOG_FORMAT: 'pretty' });
      try {
        const reply = await fetch(`${service.url}/metrics`);
        expect(reply.status).toBe(404);
        expect(await reply.json()).toEqual({ success: false, code: 'NOT_FOUND', message: 'No such route' });
      } finally {
        await service.stop();
      }
    });
  });
});
