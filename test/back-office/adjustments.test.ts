import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { awaitFinal, FULFILMENT_ENV_SOME_UNKNOWN } from '../support/fulfilment';
import { checkEventInvariants } from '../support/invariants';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { adminClient, failure } from './admin-client';

type Staff = { staff_id: string; token: string };

/**
 * A running service with the upstream simulator, merchants with funded
 * wallets and orders that end (or do not), for one describe block.
 */
function ledgerWithOrders(env: Record<string, string>) {
  const ctx = {} as {
    db: TestDatabase;
    simulator: UpstreamSimulator;
    service: RunningService;
    admin: ReturnType<typeof adminClient>;
    rita: Staff;
    rob: Staff;
    aldo: Staff;
  };
  let seq = 0;
  beforeAll(async () => {
    ctx.db = await createTestDatabase();
    ctx.simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
    ctx.service = await startService(ctx.db, { ...FULFILMENT_ENV_SOME_UNKNOWN, UPSTREAM_URL: ctx.simulator.url, ...env });
    ctx.admin = adminClient(ctx.service.url);
    ctx.rita = await ctx.admin.createStaff('reconciler', 'Rita');
    ctx.rob = await ctx.admin.createStaff('reconciler', 'Rob');
    ctx.aldo = await ctx.admin.createStaff('auditor', 'Aldo');
  });
  afterAll(async () => {
    expect((await checkEventInvariants(ctx.service.store)).violations).toEqual([]);
    await ctx.service.stop();
    await ctx.simulator.stop();
    await ctx.db.drop();
  });

  /** An order that the upstream delivered (or, with an account ending 999, never answered). */
  async function order(merchant: TestMerchant, account = '55555555'): Promise<string> {
    const reply = await signedFetch(ctx.service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: `ADJ-${++seq}`, sku_id: 'mlbb-86', account_id: `${seq}${account}`, account_fields: { server_id: '9' } }),
    });
    return reply.body.data.order_no as string;
  }
  async function deliveredOrder(merchant: TestMerchant): Promise<string> {
    const orderNo = await order(merchant);
    expect(await awaitFinal(ctx.service, merchant, orderNo)).toMatchObject({ status: 'success' });
    return orderNo;
  }
  const adjust = (merchantId: string, body: Record<string, unknown>, by: Staff) =>
    ctx.admin('POST', `/admin/v1/wallets/${merchantId}/adjustments`, body, { token: by.token });
  const balance = async (merchant: TestMerchant) => (await signedFetch(ctx.service, merchant, { path: '/api/v2/balance' })).body.data;
  const adjustments = async (merchantId: string) =>
    (await ctx.service.store.readStream(`wallet-${merchantId}`)).filter((e) => e.type === 'WalletAdjusted').map((e) => e.data);
  /** The statement, the verification and the hash chain of a wallet, as an auditor reads them. */
  async function audited(merchantId: string) {
    const as = { token: ctx.aldo.token };
    await ctx.service.catchUp();
    const statement = await ctx.admin('GET', `/admin/v1/wallets/${merchantId}/statement?limit=1000`, undefined, as);
    const verification = await ctx.admin('POST', '/admin/v1/audit/verify', { merchant_id: merchantId }, as);
    const chain = await ctx.admin('GET', `/admin/v1/wallets/${merchantId}/chain`, undefined, as);
    return { lines: statement.body.data.lines as Record<string, any>[], verification: verification.body.data, chain: chain.body.data };
  }
  return { ctx, order, deliveredOrder, adjust, balance, adjustments, audited };
}

const correction = (orderNo: string | undefined, overrides: Record<string, unknown> = {}) => ({
  direction: 'credit',
  amount: '1.20',
  reason: 'UPSTREAM_REPORT_FAILED',
  note: 'the report, line 12, says the top-up failed',
  reference: `adj-${orderNo ?? 'none'}`,
  ...(orderNo === undefined ? {} : { order_no: orderNo }),
  ...overrides,
});

describe('wallet adjustments (no APPROVAL_THRESHOLD: they move at once)', () => {
  const { ctx, order, deliveredOrder, adjust, balance, adjustments, audited } = ledgerWithOrders({});

  it('a credit for a final order and a debit move the balance at once: 201 with the wallet and the adjustment, audited once each', async () => {
    const merchant = await provisionMerchant(ctx.service);
    const orderNo = await deliveredOrder(merchant);
    const before = await balance(merchant);
    const credit = await adjust(merchant.merchantId, correction(orderNo), ctx.rita);
    expect(credit.status).toBe(201);
    expect(credit.body).toEqual({
      success: true,
      code: 'OK',
      data: {
        wallet: { merchant_id: merchant.merchantId, currency: 'USD', balance: '100.00', frozen_balance: '0.00', available_balance: '100.00' },
        adjustment: {
          reference: `adj-${orderNo}`,
          direction: 'credit',
          amount: '1.20',
          currency: 'USD',
          reason: 'UPSTREAM_REPORT_FAILED',
          note: 'the report, line 12, says the top-up failed',
          order_no: orderNo,
          adjusted_by: ctx.rita.staff_id,
          adjusted_by_name: 'Rita',
          approved_by: null,
          approved_by_name: null,
        },
      },
    });
    expect(before.balance).toBe('98.80');
    expect((await balance(merchant)).balance).toBe('100.00');

    const again = await adjust(merchant.merchantId, correction(orderNo), ctx.rob);
    expect(again.status).toBe(201);
    expect(again.body.data.wallet).toEqual(credit.body.data.wallet);
    const debit = await adjust(
      merchant.merchantId,
      correction(undefined, { direction: 'debit', amount: '0.30', reason: 'FEE_CORRECTION', reference: 'fee-1' }),
      ctx.rita,
    );
    expect(debit.body.data.wallet).toMatchObject({ balance: '99.70', available_balance: '99.70' });
    expect(await adjustments(merchant.merchantId)).toEqual([
      {
        reference: `adj-${orderNo}`,
        direction: 'credit',
        amount: '120',
        reason: 'UPSTREAM_REPORT_FAILED',
        note: 'the report, line 12, says the top-up failed',
        orderNo,
        by: ctx.rita.staff_id,
        at: expect.any(String),
      },
      {
        reference: 'fee-1',
        direction: 'debit',
        amount: '30',
        reason: 'FEE_CORRECTION',
        note: expect.any(String),
        by: ctx.rita.staff_id,
        at: expect.any(String),
      },
    ]);
    const audit = await ctx.service.pool.query(`select staff_id, details from back_office_audit where target = $1 and action = 'wallet.adjusted' order by id`, [
      `merchant:${merchant.merchantId}`,
    ]);
    expect(audit.rows).toEqual([
      {
        staff_id: ctx.rita.staff_id,
        details: {
          reference: `adj-${orderNo}`,
          direction: 'credit',
          amount: '1.20',
          reason: 'UPSTREAM_REPORT_FAILED',
          note: 'the report, line 12, says the top-up failed',
          order_no: orderNo,
        },
      },
      { staff_id: ctx.rita.staff_id, details: expect.objectContaining({ reference: 'fee-1', direction: 'debit', amount: '0.30', order_no: null }) },
    ]);
  });

  it('shows on the statement, passes the verification and the hash chain, and shows on the order, which stays final without a callback', async () => {
    const merchant = await provisionMerchant(ctx.service);
    const orderNo = await deliveredOrder(merchant);
    await ctx.service.catchUp();
    const callbackBefore = (await ctx.service.pool.query('select * from callback_attempts where order_no = $1 order by attempt', [orderNo])).rows;
    const historyBefore = (await ctx.admin('GET', `/admin/v1/orders/${orderNo}`)).body.data.history;
    expect((await adjust(merchant.merchantId, correction(orderNo), ctx.rita)).status).toBe(201);

    const { lines, verification, chain } = await audited(merchant.merchantId);
    const line = lines.find((l) => l.type === 'WalletAdjusted');
    expect(line).toMatchObject({
      order_no: orderNo,
      reference: `adj-${orderNo}`,
      reason: 'UPSTREAM_REPORT_FAILED',
      amount: '1.20',
      balance_after: '100.00',
      available_after: '100.00',
      data: { direction: 'credit', note: 'the report, line 12, says the top-up failed', by: ctx.rita.staff_id, orderNo },
    });
    expect(line!.prev_hash).toBe(lines[lines.indexOf(line!) - 1].hash);
    expect(verification).toMatchObject({ clean: true, differences: [] });
    expect(chain).toMatchObject({ intact: true, first_break: null, last_hash: line!.hash });

    const detail = (await ctx.admin('GET', `/admin/v1/orders/${orderNo}`, undefined, { token: ctx.aldo.token })).body.data;
    expect(detail).toMatchObject({ stage: 'succeeded', status: 'success', history: historyBefore });
    expect(detail.adjustments).toEqual([
      {
        revision: line!.revision,
        position: line!.position,
        recorded_at: line!.recorded_at,
        reference: `adj-${orderNo}`,
        direction: 'credit',
        amount: '1.20',
        reason: 'UPSTREAM_REPORT_FAILED',
        note: 'the report, line 12, says the top-up failed',
        adjusted_by: ctx.rita.staff_id,
        adjusted_by_name: 'Rita',
        approved_by: null,
        approved_by_name: null,
        at: expect.any(String),
      },
    ]);
    const query = await signedFetch(ctx.service, merchant, { path: '/api/v2/topup/query', body: JSON.stringify({ order_no: orderNo }) });
    expect(query.body.data).toMatchObject({ status: 'success', fail_code: null });
    expect((await ctx.service.pool.query('select * from callback_attempts where order_no = $1 order by attempt', [orderNo])).rows).toEqual(callbackBefore);
    expect((await balance(merchant)).balance).toBe('100.00');
  });

  it('refuses, moving nothing: an unknown merchant, an unknown order, an order of another merchant or not final, a reference reused, an order corrected twice, a debit beyond the available balance', async () => {
    const merchant = await provisionMerchant(ctx.service, { deposit: 400n });
    const other = await provisionMerchant(ctx.service);
    const delivered = await deliveredOrder(merchant);
    const theirs = await deliveredOrder(other);
    const waiting = await order(merchant, '999');
    expect((await adjust(merchant.merchantId, correction(delivered), ctx.rita)).status).toBe(201);
    const refusals: [Record<string, unknown>, number, string, string?][] = [
      [correction(undefined, { reference: 'x-1', order_no: 'T00000000000000000000000000' }), 404, 'ORDER_NOT_FOUND', 'order_no'],
      [correction(theirs, { reference: 'x-2' }), 422, 'ORDER_OF_ANOTHER_MERCHANT', 'order_no'],
      [correction(waiting, { reference: 'x-3' }), 409, 'ORDER_NOT_FINAL', 'order_no'],
      [correction(delivered, { amount: '1.30' }), 409, 'ADJUSTMENT_REFERENCE_CONFLICT'],
      [correction(delivered, { reference: 'x-4' }), 409, 'ORDER_ALREADY_ADJUSTED'],
      [correction(undefined, { direction: 'debit', amount: '2.81', reference: 'x-5' }), 402, 'INSUFFICIENT_BALANCE'],
      [correction(undefined, { direction: 'sideways', reference: 'x-6' }), 422, 'VALIDATION_FAILED', 'direction'],
      [correction(undefined, { reason: 'report failed', reference: 'x-7' }), 422, 'VALIDATION_FAILED', 'reason'],
      [correction(undefined, { amount: 1.2, reference: 'x-8' }), 422, 'VALIDATION_FAILED', 'amount'],
      [correction(undefined, { note: '', reference: 'x-9' }), 422, 'VALIDATION_FAILED', 'note'],
      [{ direction: 'credit', amount: '1.00', reason: 'X', note: 'n' }, 400, 'MISSING_REQUIRED_FIELD', 'reference'],
    ];
    for (const [body, status, code, field] of refusals) {
      const reply = await adjust(merchant.merchantId, body, ctx.rita);
      expect({ body: reply.body, status: reply.status }).toEqual({ body: failure(code, field), status });
    }
    expect((await adjust('mch_0000000000000000', correction(undefined), ctx.rita)).body).toEqual(failure('MERCHANT_NOT_FOUND'));
    expect((await adjust(merchant.merchantId, correction(undefined), ctx.aldo)).body).toEqual(failure('FORBIDDEN'));
    expect(await adjustments(merchant.merchantId)).toHaveLength(1);
    // 4.00 deposited, 1.20 delivered and credited back, 1.20 frozen for the order that waits.
    expect(await balance(merchant)).toMatchObject({ balance: '4.00', available_balance: '2.80' });
    // To zero is allowed: the frozen funds stay with their order.
    const drained = await adjust(merchant.merchantId, correction(undefined, { direction: 'debit', amount: '2.80', reference: 'x-10' }), ctx.rita);
    expect(drained.body.data.wallet).toMatchObject({ balance: '1.20', frozen_balance: '1.20', available_balance: '0.00' });
  });
});

describe('wallet adjustments behind the four-eyes rule (APPROVAL_THRESHOLD=1.00)', () => {
  const { ctx, deliveredOrder, adjust, balance, adjustments, audited } = ledgerWithOrders({ APPROVAL_THRESHOLD: '1.00' });
  const decide = (approvalId: string, verdict: 'approve' | 'reject', by: Staff | null, note = 'the report checks out') =>
    ctx.admin('POST', `/admin/v1/approvals/${approvalId}/${verdict}`, { note }, { token: by === null ? undefined : by.token });

  it('a reconciler asks, another reconciler may not approve, an admin does: the event names both, and the audit trail holds', async () => {
    const merchant = await provisionMerchant(ctx.service);
    const orderNo = await deliveredOrder(merchant);
    const asked = await adjust(merchant.merchantId, correction(orderNo), ctx.rita);
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({
      code: 'APPROVAL_REQUIRED',
      data: {
        kind: 'adjustment',
        status: 'pending',
        summary: `Credit 1.20 USD for UPSTREAM_REPORT_FAILED on order ${orderNo}`,
        merchant_id: merchant.merchantId,
        amounts: [{ currency: 'USD', amount: '1.20' }],
        payload: { merchant_id: merchant.merchantId, reference: `adj-${orderNo}`, direction: 'credit', amount: '1.20', order_no: orderNo },
        requested_by: ctx.rita.staff_id,
        note: 'the report, line 12, says the top-up failed',
      },
    });
    const approvalId = asked.body.data.approval_id as string;
    expect((await balance(merchant)).balance).toBe('98.80');
    expect(await adjustments(merchant.merchantId)).toEqual([]);
    // The clerk sees their request; only an admin may grant it.
    expect((await ctx.admin('GET', `/admin/v1/approvals/${approvalId}`, undefined, { token: ctx.rita.token })).body.data.status).toBe('pending');
    expect((await decide(approvalId, 'approve', ctx.rob)).body).toEqual(failure('APPROVAL_ROLE_NOT_ALLOWED'));
    expect((await decide(approvalId, 'approve', ctx.rita)).body).toEqual(failure('SELF_APPROVAL'));

    const approved = await decide(approvalId, 'approve', null);
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({
      status: 'approved',
      decided_by: 'admin',
      decided_by_name: 'Administrator (ADMIN_TOKEN)',
      result: {
        ok: true,
        detail: {
          wallet: { balance: '100.00' },
          adjustment: {
            reference: `adj-${orderNo}`,
            adjusted_by: ctx.rita.staff_id,
            adjusted_by_name: 'Rita',
            approved_by: 'admin',
            approved_by_name: 'Administrator (ADMIN_TOKEN)',
          },
        },
      },
    });
    expect(await adjustments(merchant.merchantId)).toEqual([expect.objectContaining({ orderNo, by: ctx.rita.staff_id, approvedBy: 'admin' })]);
    const { lines, verification, chain } = await audited(merchant.merchantId);
    expect(lines.find((l) => l.type === 'WalletAdjusted')).toMatchObject({ order_no: orderNo, data: { by: ctx.rita.staff_id, approvedBy: 'admin' } });
    expect(verification).toMatchObject({ clean: true });
    expect(chain).toMatchObject({ intact: true });
    const detail = (await ctx.admin('GET', `/admin/v1/orders/${orderNo}`, undefined, { token: ctx.rob.token })).body.data;
    expect(detail.adjustments).toEqual([
      expect.objectContaining({
        adjusted_by: ctx.rita.staff_id,
        adjusted_by_name: 'Rita',
        approved_by: 'admin',
        approved_by_name: 'Administrator (ADMIN_TOKEN)',
      }),
    ]);
    const audit = await ctx.service.pool.query(
      `select staff_id, details->>'approved_by' as approved_by from back_office_audit where action = 'wallet.adjusted' and target = $1`,
      [`merchant:${merchant.merchantId}`],
    );
    expect(audit.rows).toEqual([{ staff_id: ctx.rita.staff_id, approved_by: 'admin' }]);

    // Asked again once carried out: it changes nothing, as an adjustment repeated always has.
    const again = await adjust(merchant.merchantId, correction(orderNo), ctx.rita);
    expect(again.status).toBe(201);
    expect(await adjustments(merchant.merchantId)).toHaveLength(1);
  });

  it('an adjustment under the threshold moves at once', async () => {
    const merchant = await provisionMerchant(ctx.service);
    const reply = await adjust(merchant.merchantId, correction(undefined, { amount: '0.80', reference: 'small' }), ctx.rita);
    expect(reply.status).toBe(201);
    expect(reply.body.data.wallet.balance).toBe('100.80');
  });

  it('a debit that the balance no longer covers when it is approved is refused then: the approval fails and nothing moves', async () => {
    const merchant = await provisionMerchant(ctx.service);
    const debit = (amount: string, reference: string) =>
      adjust(merchant.merchantId, correction(undefined, { direction: 'debit', amount, reference }), ctx.rita);
    const first = (await debit('60.00', 'd-60')).body.data.approval_id as string;
    const second = (await debit('50.00', 'd-50')).body.data.approval_id as string;
    expect((await decide(first, 'approve', null)).body.data).toMatchObject({ status: 'approved', result: { ok: true } });
    const refused = await decide(second, 'approve', null);
    expect(refused.status).toBe(200);
    expect(refused.body.data).toMatchObject({ status: 'failed', carried_out_at: expect.any(String), result: { ok: false, code: 'INSUFFICIENT_BALANCE' } });
    expect((await balance(merchant)).balance).toBe('40.00');
    expect(await adjustments(merchant.merchantId)).toHaveLength(1);
    // Over, so the reference may be asked for again, for what the balance allows.
    const retried = await debit('40.00', 'd-50');
    expect(retried.body.data).toMatchObject({ status: 'pending' });
    expect(retried.body.data.approval_id).not.toBe(second);
    expect((await decide(retried.body.data.approval_id, 'reject', ctx.rita, 'withdrawn')).body.data).toMatchObject({ status: 'rejected' });
  });
});
