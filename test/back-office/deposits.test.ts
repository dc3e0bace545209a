import { serviceOnFreshDatabase } from '../support/service';
import { walletAmounts } from '../support/fixtures';
import { adminClient, failure } from './admin-client';

describe('back office: deposits', () => {
  let env: Awaited<ReturnType<typeof serviceOnFreshDatabase>>;
  let admin: ReturnType<typeof adminClient>;
  beforeAll(async () => {
    env = await serviceOnFreshDatabase();
    admin = adminClient(env.service.url);
  });
  afterAll(() => env?.teardown());

  const deposit = (merchantId: string, amount: unknown, reference: unknown, token?: string) =>
    admin('POST', `/admin/v1/merchants/${merchantId}/deposits`, { amount, reference }, { token });

  const depositEvents = async (merchantId: string) =>
    (await env.service.store.readStream(`wallet-${merchantId}`)).filter((e) => e.type === 'FundsDeposited').map((e) => e.data);

  it('credits the wallet and answers 201 with it; the event says who deposited', async () => {
    const merchant = await admin.createMerchant({ currency: 'EUR' });
    const staff = await admin.createStaff('admin', 'Treasurer');
    const reply = await deposit(merchant.merchant_id, '100.00', 'bank-transfer-0001', staff.token);
    expect(reply.status).toBe(201);
    expect(reply.body).toEqual({
      success: true,
      code: 'OK',
      data: { merchant_id: merchant.merchant_id, currency: 'EUR', balance: '100.00', frozen_balance: '0.00', available_balance: '100.00' },
    });
    const second = await deposit(merchant.merchant_id, '0.5', 'bank-transfer-0002');
    expect(second.body.data).toMatchObject({ balance: '100.50', available_balance: '100.50' });
    expect(await walletAmounts(env.service.store, merchant.merchant_id)).toEqual([10050n, 0n, 10050n]);
    expect(await depositEvents(merchant.merchant_id)).toEqual([
      expect.objectContaining({ reference: 'bank-transfer-0001', by: staff.staff_id }),
      expect.objectContaining({ reference: 'bank-transfer-0002', by: 'admin' }),
    ]);
  });

  it('accepts the same reference and amount again without moving money, and audits the deposit once', async () => {
    const merchant = await admin.createMerchant();
    const first = await deposit(merchant.merchant_id, '25.00', 'ref same');
    const again = await deposit(merchant.merchant_id, '25', 'ref same');
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await depositEvents(merchant.merchant_id)).toHaveLength(1);
    const { rows } = await env.db.pool.query(`select staff_id, details from back_office_audit where target = $1 and action = 'wallet.deposited'`, [
      `merchant:${merchant.merchant_id}`,
    ]);
    expect(rows).toEqual([{ staff_id: 'admin', details: { reference: 'ref same', amount: '25.00' } }]);
  });

  it('moves the money once when the same deposit arrives many times at once', async () => {
    const merchant = await admin.createMerchant();
    const replies = await Promise.all(Array.from({ length: 20 }, () => deposit(merchant.merchant_id, '7.77', 'burst')));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(replies.map((r) => r.body.data.balance))).toEqual(new Set(['7.77']));
    expect(await walletAmounts(env.service.store, merchant.merchant_id)).toEqual([777n, 0n, 777n]);
    const { rows } = await env.db.pool.query(`select count(*)::int as n from back_office_audit where target = $1 and action = 'wallet.deposited'`, [
      `merchant:${merchant.merchant_id}`,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('completes many more concurrent deposits than the service has pooled connections', async () => {
    const merchant = await admin.createMerchant();
    const replies = await Promise.all(Array.from({ length: 150 }, (_, i) => deposit(merchant.merchant_id, '1.00', `many-${i}`)));
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([201]));
    expect(await walletAmounts(env.service.store, merchant.merchant_id)).toEqual([15000n, 0n, 15000n]);
    const { rows } = await env.db.pool.query(`select count(*)::int as n from back_office_audit where target = $1 and action = 'wallet.deposited'`, [
      `merchant:${merchant.merchant_id}`,
    ]);
    expect(rows[0].n).toBe(150);
  });

  it('answers 409 DEPOSIT_REFERENCE_CONFLICT for the same reference with another amount, moving nothing and auditing nothing', async () => {
    const merchant = await admin.createMerchant();
    await deposit(merchant.merchant_id, '10.00', 'r-1');
    const reply = await deposit(merchant.merchant_id, '10.01', 'r-1');
    expect(reply.status).toBe(409);
    expect(reply.body).toEqual(failure('DEPOSIT_REFERENCE_CONFLICT'));
    expect(await walletAmounts(env.service.store, merchant.merchant_id)).toEqual([1000n, 0n, 1000n]);
    const { rows } = await env.db.pool.query(`select details->>'amount' as amount from back_office_audit where target = $1 and action = 'wallet.deposited'`, [
      `merchant:${merchant.merchant_id}`,
    ]);
    expect(rows).toEqual([{ amount: '10.00' }]);
  });

  it('scopes references to a merchant', async () => {
    const [a, b] = [await admin.createMerchant(), await admin.createMerchant()];
    expect((await deposit(a.merchant_id, '1.00', 'shared')).body.data.balance).toBe('1.00');
    expect((await deposit(b.merchant_id, '2.00', 'shared')).body.data.balance).toBe('2.00');
  });

  it('answers 404 MERCHANT_NOT_FOUND for an unknown merchant', async () => {
    const reply = await deposit('mch_0123456789abcdef', '1.00', 'r');
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual(failure('MERCHANT_NOT_FOUND'));
  });

  it('accepts the largest amount', async () => {
    const merchant = await admin.createMerchant();
    const reply = await deposit(merchant.merchant_id, '10000000000000.00', 'max');
    expect(reply.status).toBe(201);
    expect(reply.body.data.balance).toBe('10000000000000.00');
  });
});
