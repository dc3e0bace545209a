import { deriveOrderNo } from '../../src/ledger/order/order-number';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase } from '../support/service';
import { ORDER_KEYS } from '../support/expectations';

/**
 * POST /api/v2/topup/query (spec §4, CONTRACT §1): either identifier, both
 * naming one order, the contract's order object, 404 for anything not this
 * merchant's, and read-your-own-writes straight after a 202.
 */

const QUERY = '/api/v2/topup/query';
const SUBMIT = '/api/v2/topup/submit';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?\+00:00$/;
const MONEY = /^(0|[1-9]\d*)\.\d{2}$/;
const ORDER_NO = /^T[0-9A-Z]{26}$/;
/** Well-formed but naming no order. */
const UNKNOWN_ORDER_NO = 'T' + '0'.repeat(26);

describe('POST /api/v2/topup/query', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let merchant: TestMerchant;
  let other: TestMerchant;
  /** The 202 data of two orders of `merchant` and one of `other`. */
  let first: any;
  let second: any;
  let othersOrder: any;

  const query = (m: TestMerchant, body: string | object) =>
    signedFetch(service, m, { path: QUERY, body: typeof body === 'string' ? body : JSON.stringify(body) });

  async function submit(m: TestMerchant, outTradeNo: string, accountId = '12345999') {
    return signedFetch(service, m, {
      path: SUBMIT,
      body: JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'mlbb-86', account_id: accountId, account_fields: { server_id: '2001' } }),
    });
  }

  async function accepted(m: TestMerchant, outTradeNo: string) {
    const reply = await submit(m, outTradeNo);
    expect(reply.status).toBe(202);
    expect(reply.body.code).toBe('ACCEPTED');
    return reply.body.data;
  }

  function expectFailure(reply: { status: number; body: any }, status: number, code: string, field?: string) {
    expect({ status: reply.status, code: reply.body.code, field: reply.body.field }).toEqual({ status, code, field });
    expect(reply.body.success).toBe(false);
    expect(typeof reply.body.message).toBe('string');
  }

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    [merchant, other] = await Promise.all([provisionMerchant(service), provisionMerchant(service)]);
    first = await accepted(merchant, 'Q-1');
    second = await accepted(merchant, 'Q-2');
    // The same out_trade_no at another merchant is a different order.
    othersOrder = await accepted(other, 'Q-OTHER');
  });
  afterAll(async () => teardown());

  describe('finds the order', () => {
    it.each([
      ['order_no', () => ({ order_no: first.order_no })],
      ['out_trade_no', () => ({ out_trade_no: 'Q-1' })],
      ['both, naming the same order', () => ({ order_no: first.order_no, out_trade_no: 'Q-1' })],
      ['both, in the other key order', () => ({ out_trade_no: 'Q-1', order_no: first.order_no })],
    ])('by %s', async (_name, body) => {
      const reply = await query(merchant, body());
      expect(reply.status).toBe(200);
      expect(reply.body.success).toBe(true);
      expect(reply.body.code).toBe('OK');
      expect(Object.keys(reply.body).sort()).toEqual(['code', 'data', 'success']);
      expect(reply.body.data).toEqual(first);
    });

    it('returns exactly the contract order object, with its types and formats', async () => {
      const { body } = await query(merchant, { out_trade_no: 'Q-1' });
      const order = body.data;
      expect(Object.keys(order).sort()).toEqual(ORDER_KEYS);
      expect(order).toEqual({
        order_no: deriveOrderNo(merchant.merchantId, 'Q-1'),
        out_trade_no: 'Q-1',
        status: 'processing',
        sku_id: 'mlbb-86',
        amount: '1.20',
        currency: 'USD',
        account_id: '12345999',
        account_fields: { server_id: '2001' },
        fail_code: null,
        fail_reason: null,
        created_at: expect.stringMatching(ISO_UTC),
        completed_at: null,
      });
      expect(order.order_no).toMatch(ORDER_NO);
      expect(order.amount).toMatch(MONEY);
      expect(order.created_at.endsWith('+00:00')).toBe(true);
      expect(Math.abs(Date.parse(order.created_at) - Date.now())).toBeLessThan(5 * 60_000);
    });

    it('gives the same object from the read model as straight from the stream', async () => {
      await service.catchUp();
      for (const [body, expected] of [
        [{ order_no: first.order_no }, first],
        [{ out_trade_no: 'Q-2' }, second],
      ]) {
        const reply = await query(merchant, body);
        expect(reply.status).toBe(200);
        expect(reply.body.data).toEqual(expected);
      }
    });
  });

  describe('does not find', () => {
    it('both identifiers naming different orders: 404 ORDER_NOT_FOUND', async () => {
      expectFailure(await query(merchant, { order_no: first.order_no, out_trade_no: 'Q-2' }), 404, 'ORDER_NOT_FOUND');
      expectFailure(await query(merchant, { order_no: second.order_no, out_trade_no: 'Q-1' }), 404, 'ORDER_NOT_FOUND');
    });

    it.each([
      ['order_no', () => ({ order_no: othersOrder.order_no })],
      ['out_trade_no', () => ({ out_trade_no: 'Q-OTHER' })],
      ['both', () => ({ order_no: othersOrder.order_no, out_trade_no: 'Q-OTHER' })],
    ])("another merchant's order by %s: 404, never 403", async (_name, body) => {
      const reply = await query(merchant, body());
      expectFailure(reply, 404, 'ORDER_NOT_FOUND');
      expect(JSON.stringify(reply.body)).not.toContain(othersOrder.order_no);
      // The owner still sees it.
      expect((await query(other, body())).status).toBe(200);
    });

    it("another merchant's order after the projection caught up: still 404", async () => {
      await service.catchUp();
      expectFailure(await query(merchant, { order_no: othersOrder.order_no }), 404, 'ORDER_NOT_FOUND');
      expectFailure(await query(other, { order_no: first.order_no }), 404, 'ORDER_NOT_FOUND');
    });

    // An order_no is 1-64 printable characters; any such string that names no order is simply not found.
    it.each([
      ['an unknown order_no', { order_no: UNKNOWN_ORDER_NO }],
      ['an unknown out_trade_no', { out_trade_no: 'NEVER-SUBMITTED' }],
      ['an unknown out_trade_no with an unknown order_no', { out_trade_no: 'NEVER-SUBMITTED', order_no: UNKNOWN_ORDER_NO }],
      ['an order_no in another format', { order_no: 'T-1a2b3c4d' }],
      ['an order_no of one character', { order_no: 'T' }],
      ['an order_no of 64 characters', { order_no: 'T'.repeat(64) }],
      ['an order_no in lower case', { order_no: 't' + 'a'.repeat(26) }],
      ['an order_no one character short', { order_no: 'T' + '0'.repeat(25) }],
      ['an order_no one character long', { order_no: 'T' + '0'.repeat(27) }],
      ['an order_no with a trailing space', { order_no: UNKNOWN_ORDER_NO + ' ' }],
      ['an order_no with spaces, punctuation and letters of any script', { order_no: 'not an order: ünïcödé 注文 🎮' }],
      ['an order_no that looks like SQL', { order_no: "' or 1=1 --" }],
    ])('%s: 404 ORDER_NOT_FOUND', async (_name, body) => {
      expectFailure(await query(merchant, body), 404, 'ORDER_NOT_FOUND');
    });

    it('a well-formed order_no of another merchant, or its own order_no in lower case: 404', async () => {
      expectFailure(await query(merchant, { order_no: othersOrder.order_no }), 404, 'ORDER_NOT_FOUND');
      expectFailure(await query(merchant, { order_no: first.order_no.toLowerCase() }), 404, 'ORDER_NOT_FOUND');
    });
  });

  describe('validates the body', () => {
    it('neither identifier: 400 MISSING_REQUIRED_FIELD naming order_no', async () => {
      expectFailure(await query(merchant, {}), 400, 'MISSING_REQUIRED_FIELD', 'order_no');
    });

    // CONTRACT §1: null is a missing field. Both lone-null cases must be 400, and a
    // null beside a real identifier must not spoil the lookup.
    it.each([
      ['order_no: null', { order_no: null }],
      ['out_trade_no: null', { out_trade_no: null }],
      ['both null', { order_no: null, out_trade_no: null }],
    ])('%s counts as missing: 400 MISSING_REQUIRED_FIELD naming order_no', async (_name, body) => {
      expectFailure(await query(merchant, body), 400, 'MISSING_REQUIRED_FIELD', 'order_no');
    });

    it.each([
      ['order_no: null beside out_trade_no', () => ({ order_no: null, out_trade_no: 'Q-1' })],
      ['out_trade_no: null beside order_no', () => ({ order_no: first.order_no, out_trade_no: null })],
    ])('%s finds the order by the other identifier', async (_name, body) => {
      const reply = await query(merchant, body());
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual(first);
    });

    it('out_trade_no: null never finds the order whose out_trade_no is the text "null"', async () => {
      const named = await accepted(merchant, 'null');
      const reply = await query(merchant, { out_trade_no: null });
      expectFailure(reply, 400, 'MISSING_REQUIRED_FIELD', 'order_no');
      expect(JSON.stringify(reply.body)).not.toContain(named.order_no);
    });

    it.each([
      ['order_no as a number', { order_no: 123 }, 'order_no'],
      ['order_no as a number, beside a good out_trade_no', { order_no: 123, out_trade_no: 'Q-1' }, 'order_no'],
      ['order_no as true', { order_no: true }, 'order_no'],
      ['order_no as an array', { order_no: ['T'] }, 'order_no'],
      ['order_no as an object', { order_no: {} }, 'order_no'],
      ['order_no empty', { order_no: '' }, 'order_no'],
      ['order_no of 65 characters', { order_no: 'T'.repeat(65) }, 'order_no'],
      ['order_no with a tab', { order_no: 'T\t1' }, 'order_no'],
      ['order_no with a line break', { order_no: UNKNOWN_ORDER_NO + '\n' }, 'order_no'],
      ['order_no with DEL', { order_no: 'T\u007f' }, 'order_no'],
      ['order_no with a zero-width space', { order_no: 'T\u200b1' }, 'order_no'],
      ['order_no with a lone surrogate', { order_no: 'T\ud800' }, 'order_no'],
      ['order_no with NUL', { order_no: 'T\u0000' }, 'order_no'],
      ['out_trade_no as a number', { out_trade_no: 1 }, 'out_trade_no'],
      ['out_trade_no empty', { out_trade_no: '' }, 'out_trade_no'],
      ['out_trade_no with a space', { out_trade_no: 'Q 1' }, 'out_trade_no'],
      ['out_trade_no of 65 characters', { out_trade_no: 'x'.repeat(65) }, 'out_trade_no'],
      ['out_trade_no with Unicode', { out_trade_no: 'Q-１' }, 'out_trade_no'],
    ])('%s: 422 VALIDATION_FAILED naming the field', async (_name, body, field) => {
      expectFailure(await query(merchant, body), 422, 'VALIDATION_FAILED', field);
    });

    it('an unknown extra field: 422 VALIDATION_FAILED naming it', async () => {
      const reply = await query(merchant, { order_no: first.order_no, include_history: true });
      expectFailure(reply, 422, 'VALIDATION_FAILED', 'include_history');
      expectFailure(await query(merchant, { out_trade_no: 'Q-1', merchant_id: other.merchantId }), 422, 'VALIDATION_FAILED', 'merchant_id');
    });

    // CONTRACT §1 checks a missing field (400) before a wrong or unknown one (422), as submit does.
    it('an unknown field and no identifier: the missing identifier comes first, 400 naming order_no', async () => {
      expectFailure(await query(merchant, { orderNo: first.order_no }), 400, 'MISSING_REQUIRED_FIELD', 'order_no');
    });

    it.each([
      ['an array', '[]'],
      ['a string', '"Q-1"'],
      ['not JSON', 'out_trade_no=Q-1'],
      ['an empty body', ''],
      ['a duplicate key', '{"out_trade_no":"Q-1","out_trade_no":"Q-2"}'],
    ])('%s: 400 INVALID_JSON', async (_name, body) => {
      expectFailure(await query(merchant, body), 400, 'INVALID_JSON');
    });
  });

  describe('reads its own writes', () => {
    it('50 concurrent submits, each queried straight after its 202, are all found', async () => {
      const m = await provisionMerchant(service);
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const outTradeNo = `RYOW-${i}`;
          const placed = await submit(m, outTradeNo, `7000${i}999`);
          const byOutTradeNo = await query(m, { out_trade_no: outTradeNo });
          const byOrderNo = await query(m, { order_no: placed.body.data?.order_no });
          return { placed, byOutTradeNo, byOrderNo };
        }),
      );
      for (const { placed, byOutTradeNo, byOrderNo } of outcomes) {
        expect(placed.status).toBe(202);
        expect({ status: byOutTradeNo.status, data: byOutTradeNo.body.data }).toEqual({ status: 200, data: placed.body.data });
        expect({ status: byOrderNo.status, data: byOrderNo.body.data }).toEqual({ status: 200, data: placed.body.data });
      }
      expect(new Set(outcomes.map((o) => o.placed.body.data.order_no)).size).toBe(50);
    });

    it('a submit refused for funds (402) leaves no order to find', async () => {
      const poor = await provisionMerchant(service, { deposit: 0n });
      const refused = await submit(poor, 'BROKE-1');
      expectFailure(refused, 402, 'INSUFFICIENT_BALANCE');
      expectFailure(await query(poor, { out_trade_no: 'BROKE-1' }), 404, 'ORDER_NOT_FOUND');
      expectFailure(await query(poor, { order_no: deriveOrderNo(poor.merchantId, 'BROKE-1') }), 404, 'ORDER_NOT_FOUND');
      await service.catchUp();
      expectFailure(await query(poor, { out_trade_no: 'BROKE-1' }), 404, 'ORDER_NOT_FOUND');
    });
  });
});
