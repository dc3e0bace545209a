import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

const SUBMIT = '/api/v2/topup/submit';
const QUERY = '/api/v2/topup/query';
const LONE_HIGH = '\ud800';
const LONE_LOW = '\udfff';
const NUL = '\u0000';
const VALID_SUBMIT = { out_trade_no: 'BT-1', sku_id: 'mlbb-86', account_id: '12345678', account_fields: { server_id: '2001' } };

type Case = [name: string, path: string, body: Record<string, unknown>, status: number, code: string, field: string];

/**
 * A lone UTF-16 surrogate (JSON.parse makes one of "\ud800") or a NUL in any
 * field or key of a merchant request is 422 VALIDATION_FAILED naming where it
 * is (a dotted path inside account_fields), after the gateway's checks and
 * after a missing field, and it creates, freezes and moves nothing.
 */
describe('merchant API: lone surrogates and NUL', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let merchant: TestMerchant;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    merchant = await provisionMerchant(service);
  });
  afterAll(async () => teardown());

  const send = (m: TestMerchant, path: string, body: object) => signedFetch(service, m, { path, body: JSON.stringify(body) });

  /** Every trace a request could leave: events, order rows, and the wallet. */
  async function snapshot() {
    const { rows } = await service.pool.query(`select (select count(*) from es_events) as events, (select count(*) from rm_orders) as orders`);
    const balance = await send(merchant, '/api/v2/balance', {});
    return { ...rows[0], balance: balance.body.data };
  }

  function expectFailure(reply: { status: number; body: any }, status: number, code: string, field?: string) {
    expect({ status: reply.status, code: reply.body.code, field: reply.body.field }).toEqual({ status, code, field });
    expect(reply.body.success).toBe(false);
    expect(typeof reply.body.message).toBe('string');
  }

  const submit = (change: Record<string, unknown>) => ({ ...VALID_SUBMIT, ...change });

  it.each<Case>([
    ['a lone surrogate in out_trade_no', SUBMIT, submit({ out_trade_no: `A-${LONE_HIGH}` }), 422, 'VALIDATION_FAILED', 'out_trade_no'],
    ['NUL in out_trade_no', SUBMIT, submit({ out_trade_no: `A-1${NUL}` }), 422, 'VALIDATION_FAILED', 'out_trade_no'],
    ['a lone surrogate in sku_id', SUBMIT, submit({ sku_id: `mlbb-86${LONE_LOW}` }), 422, 'VALIDATION_FAILED', 'sku_id'],
    ['a lone surrogate in account_id', SUBMIT, submit({ account_id: `123${LONE_LOW}` }), 422, 'VALIDATION_FAILED', 'account_id'],
    ['NUL in account_id', SUBMIT, submit({ account_id: `123${NUL}` }), 422, 'VALIDATION_FAILED', 'account_id'],
    [
      'a lone surrogate in an account field',
      SUBMIT,
      submit({ account_fields: { server_id: `20${LONE_HIGH}` } }),
      422,
      'VALIDATION_FAILED',
      'account_fields.server_id',
    ],
    ['NUL in an account field', SUBMIT, submit({ account_fields: { server_id: `2001${NUL}` } }), 422, 'VALIDATION_FAILED', 'account_fields.server_id'],
    [
      'a lone surrogate in an account field key',
      SUBMIT,
      submit({ account_fields: { server_id: '2001', [LONE_HIGH]: 'x' } }),
      422,
      'VALIDATION_FAILED',
      `account_fields.${LONE_HIGH}`,
    ],
    [
      'NUL in an account field key',
      SUBMIT,
      submit({ account_fields: { [`server_id${NUL}`]: '2001' } }),
      422,
      'VALIDATION_FAILED',
      `account_fields.server_id${NUL}`,
    ],
    ['a lone surrogate in a key', SUBMIT, submit({ [LONE_LOW]: 1 }), 422, 'VALIDATION_FAILED', LONE_LOW],
    [
      'a missing field before a lone surrogate',
      SUBMIT,
      { out_trade_no: 'BT-2', account_id: LONE_HIGH, account_fields: {} },
      400,
      'MISSING_REQUIRED_FIELD',
      'sku_id',
    ],
    ['a lone surrogate in order_no', QUERY, { order_no: `T${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'order_no'],
    ['NUL in order_no', QUERY, { order_no: `T${'0'.repeat(26)}${NUL}` }, 422, 'VALIDATION_FAILED', 'order_no'],
    ['a lone surrogate in out_trade_no of a query', QUERY, { out_trade_no: LONE_LOW }, 422, 'VALIDATION_FAILED', 'out_trade_no'],
    ['NUL in out_trade_no beside an order_no', QUERY, { order_no: `T${'0'.repeat(26)}`, out_trade_no: NUL }, 422, 'VALIDATION_FAILED', 'out_trade_no'],
    ['a lone surrogate in a key of a query', QUERY, { out_trade_no: 'BT-1', [LONE_HIGH]: 1 }, 422, 'VALIDATION_FAILED', LONE_HIGH],
    ['a lone surrogate in a key of balance', '/api/v2/balance', { [LONE_HIGH]: 1 }, 422, 'VALIDATION_FAILED', LONE_HIGH],
    ['NUL in a key of products', '/api/v2/products', { [NUL]: 1 }, 422, 'VALIDATION_FAILED', NUL],
  ])('%s', async (_name, path, body, status, code, field) => {
    const before = await snapshot();
    expectFailure(await send(merchant, path, body), status, code, field);
    expect(await snapshot()).toEqual(before);
  });

  it('the same body behind the gateway gets the gateway refusal first', async () => {
    const bad = submit({ account_id: LONE_HIGH });
    const suspended = await provisionMerchant(service, { status: 'suspended' });
    expectFailure(await send(suspended, SUBMIT, bad), 403, 'MERCHANT_SUSPENDED');
    const fenced = await provisionMerchant(service, { ipWhitelist: ['203.0.113.7'] });
    expectFailure(await send(fenced, SUBMIT, bad), 403, 'IP_NOT_ALLOWED');
    expectFailure(await signedFetch(service, merchant, { path: SUBMIT, body: JSON.stringify(bad), signature: '0'.repeat(64) }), 401, 'INVALID_SIGNATURE');
  });
});
