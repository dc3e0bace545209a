import { MerchantClient } from '../../src/merchant-client';
import { adminClient } from '../back-office/admin-client';
import { callbackEndpoint } from '../support/callback-endpoint';
import { ChildService, spawnService } from '../support/child-service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

// A merchant testing locally points its callback URL at 127.0.0.1 while the
// service refuses private networks: creating it says so, and the refused
// callbacks are in the service log once, not only in the delivery log.
describe('a callback URL on a loopback address without CALLBACK_ALLOW_PRIVATE_NETWORKS', () => {
  let db: TestDatabase;
  let service: ChildService;
  let admin: ReturnType<typeof adminClient>;
  let endpoint: Awaited<ReturnType<typeof callbackEndpoint>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    endpoint = await callbackEndpoint(() => ({ status: 200, body: 'success' }));
    service = await spawnService(db, {
      FULFILMENT_CONCURRENCY: '4',
      UPSTREAM_SIM_DELAY_MS: '20',
      CALLBACK_CONCURRENCY: '8',
      CALLBACK_RETRY_DELAYS: '100ms,100ms',
      CALLBACK_TIMEOUT_MS: '1000',
    });
    admin = adminClient(service.url);
  });
  afterAll(async () => {
    await service?.kill('SIGTERM');
    await endpoint?.stop();
    await db?.drop();
  });

  const warningLines = () =>
    service
      .output()
      .split('\n')
      .filter((line) => line.includes('will be refused'));

  it('creating or changing such a merchant answers with a warning beside the merchant, and logs it', async () => {
    const created = await admin('POST', '/admin/v1/merchants', { name: 'Local shop', callback_url: endpoint.url });
    expect(created.status).toBe(201);
    expect(created.body.data.callback_url).toBe(endpoint.url);
    expect(created.body.warnings).toEqual([
      {
        code: 'CALLBACK_URL_NOT_PUBLIC',
        field: 'callback_url',
        message: `callbacks to ${endpoint.url} will be refused: 127.0.0.1 is a loopback address, and the service runs without CALLBACK_ALLOW_PRIVATE_NETWORKS=true`,
      },
    ]);
    const id = created.body.data.merchant_id;
    expect(warningLines()).toEqual([expect.stringContaining(`merchant ${id}: callbacks to ${endpoint.url} will be refused`)]);

    const renamed = (callback_url: string | null) => admin('PATCH', `/admin/v1/merchants/${id}`, { callback_url });
    expect((await renamed('https://shop.example/topup/callback')).body).not.toHaveProperty('warnings');
    expect((await renamed(null)).body).not.toHaveProperty('warnings');
    expect((await admin('PATCH', `/admin/v1/merchants/${id}`, { status: 'active' })).body).not.toHaveProperty('warnings');
    expect((await renamed('http://localhost:9/cb')).body.warnings).toEqual([
      expect.objectContaining({ message: expect.stringContaining('localhost is a loopback name') }),
    ]);
    expect((await renamed('http://[::1]:9/cb')).body.warnings).toEqual([
      expect.objectContaining({ message: expect.stringContaining('::1 is a loopback address') }),
    ]);
    expect((await renamed('http://10.1.2.3/cb')).body.warnings).toEqual([
      expect.objectContaining({ message: expect.stringContaining('10.1.2.3 is not a public address') }),
    ]);
    expect(warningLines()).toHaveLength(4);
  });

  it('its refused callbacks are logged once per merchant and URL, however many attempts are refused', async () => {
    const created = await admin('POST', '/admin/v1/merchants', { name: 'Local shop 2', callback_url: endpoint.url });
    const merchant = created.body.data;
    await admin('PUT', '/admin/v1/products/vouchers', { name: 'Vouchers' });
    await admin('PUT', '/admin/v1/skus/voucher-10', {
      product_id: 'vouchers',
      name: 'Voucher 10',
      required_account_fields: [],
      supports_account_check: false,
      on_shelf: true,
    });
    await admin('PUT', `/admin/v1/merchants/${merchant.merchant_id}/prices/voucher-10`, { price: '10.00' });
    await admin('POST', `/admin/v1/merchants/${merchant.merchant_id}/deposits`, { amount: '100.00', reference: 'test' });
    const client = new MerchantClient({ baseUrl: service.url, apiKey: merchant.api_key, appSecret: merchant.app_secret });

    const orders: string[] = [];
    for (const [outTradeNo, accountId] of [
      ['L-1', '12345678'],
      ['L-2', '12345000'],
    ]) {
      const { status, body } = await client.submit({ out_trade_no: outTradeNo, sku_id: 'voucher-10', account_id: accountId, account_fields: {} });
      expect(status).toBe(202);
      if (body.success) orders.push(body.data.order_no);
    }
    // Three attempts each (the first and two retries), all refused before any connection.
    for (const orderNo of orders) {
      const deadline = Date.now() + 20_000;
      let log = await admin('GET', `/admin/v1/orders/${orderNo}/callbacks`);
      while (log.body.data?.state !== 'exhausted' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        log = await admin('GET', `/admin/v1/orders/${orderNo}/callbacks`);
      }
      expect(log.body.data).toMatchObject({ state: 'exhausted', attempts_made: 3 });
      expect(log.body.data.attempts.map((a: { error: string }) => a.error)).toEqual(Array(3).fill('forbidden address 127.0.0.1'));
    }
    expect(endpoint.received).toHaveLength(0);

    const refusals = service
      .output()
      .split('\n')
      .filter((line) => line.includes('are refused'));
    expect(refusals).toEqual([
      expect.stringContaining(`callbacks of merchant ${merchant.merchant_id} to ${endpoint.url} are refused: 127.0.0.1 is not a public address`),
    ]);
    expect(refusals[0]).toContain('CALLBACK_ALLOW_PRIVATE_NETWORKS=true');
    expect(refusals[0]).toMatch(/WARN/);
  });
});
