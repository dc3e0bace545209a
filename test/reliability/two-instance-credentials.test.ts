import { adminClient } from '../back-office/admin-client';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * A change made through one instance governs the very next request through
 * any instance: suspension, whitelist, rate limit, a merchant just created.
 */
describe('two instances see every merchant change at once', () => {
  let db: TestDatabase;
  let a: RunningService;
  let b: RunningService;
  let merchant: TestMerchant;

  beforeAll(async () => {
    db = await createTestDatabase();
    [a, b] = await Promise.all([startService(db), startService(db)]);
    const created = await adminClient(a.url).createMerchant({ name: 'Credentials Co', rate_limit_per_second: 1000 });
    merchant = { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret };
  });
  afterAll(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await db.drop();
  });

  const balance = async (through: RunningService) => {
    const reply = await signedFetch(through, merchant, { path: '/api/v2/balance' });
    return `${reply.status} ${reply.body.code}`;
  };
  const patch = async (through: RunningService, body: Record<string, unknown>) =>
    expect((await adminClient(through.url)('PATCH', `/admin/v1/merchants/${merchant.merchantId}`, body)).status).toBe(200);

  it('a merchant created through B is served through A at once', async () => {
    const created = await adminClient(b.url).createMerchant({ name: 'Fresh Co' });
    // A has just been asked for this key (and found nothing) a moment before it existed.
    expect((await signedFetch(a, { merchantId: '', apiKey: `${created.api_key}x`, appSecret: '' }, { path: '/api/v2/balance' })).status).toBe(401);
    const reply = await signedFetch(a, { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret }, { path: '/api/v2/balance' });
    expect(reply.status).toBe(200);
  });

  it('suspension and reactivation take effect on the very next request through the other instance', async () => {
    for (let round = 0; round < 5; round++) {
      expect(await balance(a)).toBe('200 OK');
      await patch(b, { status: 'suspended' });
      expect(await balance(a)).toBe('403 MERCHANT_SUSPENDED');
      await patch(b, { status: 'active' });
      expect(await balance(a)).toBe('200 OK');
    }
  });

  it('a whitelist change takes effect on the very next request', async () => {
    expect(await balance(a)).toBe('200 OK');
    await patch(b, { ip_whitelist: ['203.0.113.7'] });
    expect(await balance(a)).toBe('403 IP_NOT_ALLOWED');
    await patch(b, { ip_whitelist: ['127.0.0.1', '::1'] });
    expect(await balance(a)).toBe('200 OK');
    await patch(b, { ip_whitelist: [] });
  });

  it('a price or shelf change through B governs the very next submit through A', async () => {
    const admin = adminClient(b.url);
    expect((await admin('PUT', '/admin/v1/products/gift', { name: 'Gift cards' })).status).toBe(200);
    const sku = { product_id: 'gift', name: 'Voucher', required_account_fields: [], supports_account_check: false, on_shelf: true };
    expect((await admin('PUT', '/admin/v1/skus/voucher', sku)).status).toBe(200);
    expect((await admin('POST', `/admin/v1/merchants/${merchant.merchantId}/deposits`, { amount: '100.00', reference: 'float' })).status).toBe(201);
    const submit = async (outTradeNo: string) => {
      const reply = await signedFetch(a, merchant, {
        path: '/api/v2/topup/submit',
        body: JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'voucher', account_id: '12345678', account_fields: {} }),
      });
      return reply.status === 202 ? reply.body.data.amount : reply.body.code;
    };
    expect(await submit('P-0')).toBe('SKU_OFF_SHELF'); // no price for this merchant yet
    expect((await admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/prices/voucher`, { price: '1.00' })).status).toBe(200);
    expect(await submit('P-1')).toBe('1.00');
    expect((await admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/prices/voucher`, { price: '2.50' })).status).toBe(200);
    expect(await submit('P-2')).toBe('2.50');
    expect((await admin('PUT', '/admin/v1/skus/voucher', { ...sku, on_shelf: false })).status).toBe(200);
    expect(await submit('P-3')).toBe('SKU_OFF_SHELF');
    expect((await admin('PUT', '/admin/v1/skus/voucher', sku)).status).toBe(200);
    expect(await submit('P-3')).toBe('2.50');
  });

  it('duplicate submits landing on both instances make one order', async () => {
    const body = JSON.stringify({ out_trade_no: 'DUP-1', sku_id: 'voucher', account_id: '12345678', account_fields: {} });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => signedFetch(i % 2 ? a : b, merchant, { path: '/api/v2/topup/submit', body })),
    );
    const codes = replies.map((r) => r.body.code).sort();
    expect(codes).toEqual(['ACCEPTED', ...Array(19).fill('DUPLICATE')]);
    expect(new Set(replies.map((r) => r.body.data.order_no)).size).toBe(1);
  });

  it('a rate-limit change takes effect on the very next request', async () => {
    await patch(b, { rate_limit_per_second: 1 });
    // Two requests in one second: the second is over a limit of 1.
    const replies = [await balance(a), await balance(a)];
    expect(replies).toContain('429 RATE_LIMITED');
    await patch(b, { rate_limit_per_second: 1000 });
    await new Promise((r) => setTimeout(r, 1000));
    expect(await balance(a)).toBe('200 OK');
  });
});
