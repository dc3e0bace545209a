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
