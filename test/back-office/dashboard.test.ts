import { CALLBACK_ENV, callbackEndpoint } from '../support/callback-endpoint';
import { awaitFinal, FULFILMENT_ENV } from '../support/fulfilment';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { parseSamples, sample } from '../support/prometheus-text';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { until } from '../support/until';
import { adminClient, failure } from './admin-client';

const DASHBOARD = '/admin/v1/operations/dashboard';
const SKU = { product_id: 'mlbb', name: '86 Diamonds', required_account_fields: ['server_id'], supports_account_check: true, on_shelf: true };

type Point = { at: string; orders: Record<string, number>; upstream: Record<string, any>; callbacks: Record<string, any> };

/** The series' counts summed over the window, per group. */
function totals(series: Point[]) {
  const sum = (group: 'orders' | 'upstream' | 'callbacks') => {
    const out: Record<string, number> = {};
    for (const point of series) {
      for (const [name, value] of Object.entries(point[group])) if (typeof value === 'number') out[name] = (out[name] ?? 0) + value;
    }
    delete out.acknowledged_ratio;
    return out;
  };
  return { orders: sum('orders'), upstream: sum('upstream'), callbacks: sum('callbacks') };
}

/**
 * The operations dashboard against the real service: orders driven through
 * the merchant API to the built-in simulator (delivered, refused, busy then
 * delivered, never answered and then resolved by a clerk, refused for want
 * of money) show in its series, callbacks in their acknowledgement rate,
 * merchants under their threshold in its list and in the Prometheus gauge.
 */
describe('GET /admin/v1/operations/dashboard', () => {
  let db: TestDatabase;
  let service: RunningService;
  let endpoint: Awaited<ReturnType<typeof callbackEndpoint>>;
  let admin: ReturnType<typeof adminClient>;
  let acme: TestMerchant;
  let thrifty: TestMerchant;
  let broke: TestMerchant;
  let unknownOrder: string;
  let firstCallback: string | undefined;

  const merchantOf = (data: Record<string, any>): TestMerchant => ({ merchantId: data.merchant_id, apiKey: data.api_key, appSecret: data.app_secret });
  const submit = (merchant: TestMerchant, outTradeNo: string, accountId: string) =>
    signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'mlbb-86', account_id: accountId, account_fields: { server_id: '1' } }),
    });
  const dashboard = async (query = '', token?: string) => admin('GET', `${DASHBOARD}${query}`, undefined, token === undefined ? {} : { token });
  const scrape = async () => parseSamples(await (await fetch(`${service.url}/metrics`)).text());

  beforeAll(async () => {
    db = await createTestDatabase();
    // The first callback sent is refused once (500), every other acknowledged.
    endpoint = await callbackEndpoint((orderNo, attempt) => {
      firstCallback ??= orderNo;
      return orderNo === firstCallback && attempt === 1 ? { status: 500 } : { status: 200, body: 'success' };
    });
    // Long enough a timeout that every order the simulator answers is answered on a busy machine; the one it never answers takes it.
    service = await startService(db, { ...FULFILMENT_ENV, ...CALLBACK_ENV, UPSTREAM_SIM_DELAY_MS: '20', UPSTREAM_TIMEOUT_MS: '2000' });
    admin = adminClient(service.url);
    expect((await admin('PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' })).status).toBe(200);
    expect((await admin('PUT', '/admin/v1/skus/mlbb-86', SKU)).status).toBe(200);
    acme = merchantOf(await admin.createMerchant({ name: 'Acme Games', callback_url: endpoint.url, low_balance_threshold: '100.00' }));
    thrifty = merchantOf(await admin.createMerchant({ name: 'Thrifty', callback_url: endpoint.url, low_balance_threshold: '1' }));
    broke = merchantOf(await admin.createMerchant({ name: 'Broke' }));
    for (const [merchant, amount] of [
      [acme, '50.00'],
      [thrifty, '10.00'],
    ] as const) {
      expect((await admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/prices/mlbb-86`, { price: '1.20' })).status).toBe(200);
      expect((await admin('POST', `/admin/v1/merchants/${merchant.merchantId}/deposits`, { amount, reference: 'opening' })).status).toBe(201);
    }
    expect((await admin('PUT', `/admin/v1/merchants/${broke.merchantId}/prices/mlbb-86`, { price: '1.20' })).status).toBe(200);

    // Three delivered, one refused by the upstream, one busy twice then delivered, one never answered.
    const accounts = ['12345678', '22345678', '32345678', '12345000', '12345503', '12345999'];
    const accepted = await Promise.all(accounts.map((account, i) => submit(acme, `D-${i}`, account)));
    expect(accepted.map((reply) => reply.status)).toEqual(accounts.map(() => 202));
    expect((await submit(broke, 'D-poor', '12345678')).status).toBe(402);
    const finals = await Promise.all(accepted.slice(0, 5).map((reply) => awaitFinal(service, acme, reply.body.data.order_no)));
    expect(finals.map((order) => order.status)).toEqual(['success', 'success', 'success', 'failed', 'success']);
    unknownOrder = accepted[5].body.data.order_no;
    const queue = await until(
      () => dashboard(),
      (reply) => reply.body.data?.now.reconciliation.unknown_result_orders === 1,
    );
    expect(queue.body.data.now.reconciliation).toEqual({ unknown_result_orders: 1, oldest_age_seconds: expect.any(Number), oldest_order_no: unknownOrder });
    const clerk = await admin.createStaff('reconciler', 'Rita');
    const resolved = await admin(
      'POST',
      `/admin/v1/reconciliation/orders/${unknownOrder}/resolve`,
      { outcome: 'failed', note: 'never delivered' },
      { token: clerk.token },
    );
    expect(resolved.status).toBe(200);
    expect((await awaitFinal(service, acme, unknownOrder)).status).toBe('failed');
    // Every final order called back: six, the first one twice.
    await until(
      async () => endpoint.received.length,
      (n) => n >= 7,
    );
    await service.catchUp();
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await endpoint?.stop();
    await db?.drop();
  });

  it('counts each order in the minute it reached each outcome, and the upstream’s sends, answers and latency', async () => {
    const reply = await until(
      () => dashboard(),
      (r) => totals(r.body.data.series).callbacks.acknowledged === 6,
    );
    expect(reply.status).toBe(200);
    const data = reply.body.data;
    expect(data).toMatchObject({ window: '1h', step_seconds: 60 });
    expect(data.series).toHaveLength(60);
    expect(Date.parse(data.series[1].at) - Date.parse(data.series[0].at)).toBe(60_000);
    expect(data.from).toBe(data.series[0].at);
    expect(Date.parse(data.to) - Date.parse(data.series[59].at)).toBe(60_000);
    expect(Date.parse(data.series[59].at)).toBeLessThanOrEqual(Date.parse(data.at));

    const sums = totals(data.series);
    // Six accepted; four succeeded, two failed (one refused upstream, one resolved by the clerk); one unknown; one refused at submit.
    expect(sums.orders).toEqual({ accepted: 6, success: 4, failed: 2, unknown: 1, refused: 1, resolved: 1 });
    // Eight sends: one each, and three for the busy account, whose first two got no definitive answer.
    expect(sums.upstream).toEqual({ sent: 8, delivered: 4, refused: 1, unknown: 1, retried: 2 });
    // The answer never given waited out the 2 s timeout: it is the slowest of its minute.
    const p99s = data.series.map((p: Point) => p.upstream.latency_ms.p99).filter((v: number | null) => v !== null);
    expect(Math.max(...p99s)).toBeGreaterThanOrEqual(2000);
    for (const point of data.series as Point[]) {
      const answered = point.upstream.delivered + point.upstream.refused + point.upstream.unknown;
      expect(point.upstream.latency_ms.p50 === null).toBe(answered === 0);
      if (answered > 0) expect(point.upstream.latency_ms.p50).toBeLessThanOrEqual(point.upstream.latency_ms.p99);
    }
    // Seven callback attempts: one refused, six acknowledged.
    expect(sums.callbacks).toEqual({ acknowledged: 6, not_acknowledged: 1 });
    const ratios = data.series.map((p: Point) => p.callbacks.acknowledged_ratio).filter((r: number | null) => r !== null);
    expect(Math.min(...ratios)).toBeLessThan(1);

    expect(data.now.fulfilment).toEqual({ pending: 0, oldest_age_seconds: null });
    expect(data.now.callbacks).toEqual({ pending: 0, exhausted: 0, oldest_pending_age_seconds: null });
    expect(data.now.reconciliation).toEqual({ unknown_result_orders: 0, oldest_age_seconds: null, oldest_order_no: null });
    expect(data.now.projections.map((p: { name: string }) => p.name).sort()).toEqual([
      'callback-schedule',
      'fulfilment-jobs',
      'order-minutes',
      'orders',
      'wallets',
    ]);
    for (const projection of data.now.projections) expect(projection).toMatchObject({ events_behind: 0, events_behind_at_least: false, lag_seconds: 0 });
    // Every send was answered: none is left waiting.
    expect((await service.pool.query('select count(*)::int as n from rm_upstream_sends')).rows[0].n).toBe(0);
  });

  it('window=24h: 96 points of 15 minutes with the same counts', async () => {
    const hour = (await dashboard('?window=1h')).body.data;
    const reply = await dashboard('?window=24h');
    expect(reply.status).toBe(200);
    const day = reply.body.data;
    expect(day).toMatchObject({ window: '24h', step_seconds: 900 });
    expect(day.series).toHaveLength(96);
    expect(day.series.every((p: Point) => Date.parse(p.at) % 900_000 === 0)).toBe(true);
    expect(Date.parse(day.to) - Date.parse(day.from)).toBe(24 * 3_600_000);
    expect(totals(day.series)).toEqual(totals(hour.series));
  });

  it.each<[string, string, string]>([
    ['another window', '?window=7d', 'window'],
    ['an empty window', '?window=', 'window'],
    ['the window twice', '?window=1h&window=24h', 'window'],
    ['a bracketed window', '?window[a]=1h', 'window'],
    ['a parameter the route does not take', '?merchant_id=x', 'merchant_id'],
    ['a list page size', '?limit=10', 'limit'],
  ])('refuses %s: 422 VALIDATION_FAILED naming the parameter', async (_name, query, field) => {
    const reply = await dashboard(query);
    expect({ status: reply.status, body: reply.body }).toEqual({ status: 422, body: failure('VALIDATION_FAILED', field) });
    expect(reply.body.message).toContain(field);
  });

  it('is for operators: admins only, a clerk or an auditor gets 403, no token 401', async () => {
    const clerk = await admin.createStaff('reconciler', 'Clerk');
    const auditor = await admin.createStaff('auditor', 'Auditor');
    const operator = await admin.createStaff('admin', 'Operator');
    expect((await dashboard('', clerk.token)).body).toEqual(failure('FORBIDDEN'));
    expect((await dashboard('', auditor.token)).body).toEqual(failure('FORBIDDEN'));
    expect((await dashboard('', operator.token)).status).toBe(200);
    const none = await admin('GET', DASHBOARD, undefined, { token: null });
    expect({ status: none.status, body: none.body }).toEqual({ status: 401, body: failure('UNAUTHORIZED') });
  });

  it('lists the merchants under their low-balance threshold, and the gauge says the same', async () => {
    const balance = async (merchant: TestMerchant) => (await signedFetch(service, merchant, { path: '/api/v2/balance' })).body.data.available_balance as string;
    const listed = async () => (await dashboard()).body.data.now.low_balance;
    const acmeAvailable = await balance(acme);
    expect(await listed()).toEqual({
      total: 1,
      merchants: [{ merchant_id: acme.merchantId, name: 'Acme Games', currency: 'USD', available_balance: acmeAvailable, low_balance_threshold: '100.00' }],
    });
    let metrics = await scrape();
    expect(sample(metrics, 'topup_merchant_low_balance', { merchant_id: acme.merchantId })).toBe(1);
    expect(metrics.has(`topup_merchant_low_balance{merchant_id="${thrifty.merchantId}"}`)).toBe(true);
    expect(sample(metrics, 'topup_merchant_low_balance', { merchant_id: thrifty.merchantId })).toBe(0);
    // No threshold: neither listed nor in the gauge.
    expect([...metrics.keys()].some((key) => key.includes(broke.merchantId))).toBe(false);

    // Raise Thrifty's threshold over its balance, remove Acme's.
    const raised = await admin('PATCH', `/admin/v1/merchants/${thrifty.merchantId}`, { low_balance_threshold: '20' });
    expect(raised.body.data.low_balance_threshold).toBe('20.00');
    const removed = await admin('PATCH', `/admin/v1/merchants/${acme.merchantId}`, { low_balance_threshold: null });
    expect(removed.body.data.low_balance_threshold).toBeNull();
    expect(await listed()).toEqual({
      total: 1,
      merchants: [{ merchant_id: thrifty.merchantId, name: 'Thrifty', currency: 'USD', available_balance: '10.00', low_balance_threshold: '20.00' }],
    });
    metrics = await scrape();
    expect(sample(metrics, 'topup_merchant_low_balance', { merchant_id: thrifty.merchantId })).toBe(1);
    expect(metrics.has(`topup_merchant_low_balance{merchant_id="${acme.merchantId}"}`)).toBe(false);

    // A deposit above the threshold takes the merchant off the list once the wallets' read model has it.
    expect((await admin('POST', `/admin/v1/merchants/${thrifty.merchantId}/deposits`, { amount: '15.00', reference: 'top-up' })).status).toBe(201);
    expect(
      await until(
        () => listed(),
        (list) => list.total === 0,
      ),
    ).toEqual({ total: 0, merchants: [] });
    expect(sample(await scrape(), 'topup_merchant_low_balance', { merchant_id: thrifty.merchantId })).toBe(0);
  });

  it('a rebuild of the rollups gives the same rows and the same series', async () => {
    const tables = ['rm_order_minutes', 'rm_upstream_latency', 'rm_upstream_sends'];
    const rows = async () => {
      const out: Record<string, unknown[]> = {};
      for (const table of tables) out[table] = (await service.pool.query(`select row_to_json(x)::text as r from ${table} x order by 1`)).rows;
      return out;
    };
    const live = await rows();
    expect(live.rm_order_minutes.length).toBeGreaterThan(0);
    expect(live.rm_upstream_latency.length).toBeGreaterThan(0);
    const before = (await dashboard()).body.data;
    const started = await admin('POST', '/admin/v1/projections/rebuild', { projection: 'order-minutes' });
    expect(started.status).toBe(202);
    const run = await until(
      () => admin('GET', `/admin/v1/projections/rebuild/${started.body.data.rebuild_id}`),
      (reply) => reply.body.data?.status !== 'running',
    );
    expect(run.body.data).toMatchObject({ status: 'done', projections: [{ name: 'order-minutes', events: expect.any(Number) }] });
    expect(await rows()).toEqual(live);
    const after = (await dashboard()).body.data;
    // The minutes both windows cover.
    const common = (series: Point[]) => series.filter((p) => Date.parse(p.at) >= Date.parse(after.from) && Date.parse(p.at) < Date.parse(before.to));
    expect(common(after.series)).toEqual(common(before.series));
    expect(common(after.series).length).toBeGreaterThan(50);
  });
});
