/**
 * The benchmark's conventional CRUD submit server: what a submit costs done
 * the usual way, on bare node:http and pg, without events or projections.
 *
 * A submit checks the signature as the service does (signed-http.ts), inserts
 * the nonce in a statement of its own (autocommit, durable: a replay is
 * refused even after a crash), then runs one transaction: insert the order,
 * unique per (merchant, out_trade_no), and
 * `update merchants set frozen = frozen + $amount where id = $merchant and balance - frozen >= $amount`.
 * 202 with the order; 200 DUPLICATE for the same out_trade_no and target, 409
 * for another target; 402 when the update matched no row (the transaction is
 * rolled back, so the order does not exist). Merchants and prices are cached
 * in memory once read, as the service caches them. Tables: crud-store.ts.
 *
 * Started by submit-bench.ts as a child process with DATABASE_URL or PG*
 * naming a database with those tables; PORT (default 0: any free port);
 * CRUD_POOL_SIZE (default 20, the service's main pool). Once listening it
 * prints "CRUD_LISTENING <port>" on stdout. With CRUD_UPSTREAM_URL it is the
 * whole-life peer: the submit's transaction also queues the order's job, and
 * crud-fulfilment.ts completes it (CRUD_FULFILMENT_CONCURRENCY jobs at once,
 * default 256 as the service's FULFILMENT_CONCURRENCY).
 */
import http from 'node:http';
import { PoolClient } from 'pg';
import { TIMESTAMP_TOLERANCE_SECONDS } from '../../src/merchant-client/signing';
import { connectionConfig } from '../../src/config/database-connection';
import { createPool } from '../../src/infrastructure/postgres/connection';
import { isoTimestamp } from '../../src/shared/clock';
import { formatAmount } from '../../src/shared/money';
import { CrudFulfilment } from './crud-fulfilment';
import { checkSignature, listen, parseObject, readBody, refuse, reply } from './signed-http';

const SUBMIT_PATH = '/api/v2/topup/submit';
const OUT_TRADE_NO = /^[A-Za-z0-9\-_.:]{1,64}$/;

const pool = createPool(connectionConfig(process.env.DATABASE_URL), { max: Number(process.env.CRUD_POOL_SIZE ?? 20) });
/** The whole life (crud-fulfilment.ts) when an upstream is named; the submit alone otherwise. */
const fulfilment = process.env.CRUD_UPSTREAM_URL
  ? new CrudFulfilment(pool, process.env.CRUD_UPSTREAM_URL, Number(process.env.CRUD_FULFILMENT_CONCURRENCY ?? 256))
  : undefined;

interface Merchant {
  id: string;
  appSecret: string;
  currency: string;
}

const merchants = new Map<string, Promise<Merchant | undefined>>();
const prices = new Map<string, Promise<bigint | undefined>>();

function merchantOf(apiKey: string): Promise<Merchant | undefined> {
  let found = merchants.get(apiKey);
  if (!found) {
    found = pool
      .query<{ id: string; app_secret: string; currency: string }>('select id, app_secret, currency from merchants where api_key = $1', [apiKey])
      .then(({ rows }) => (rows[0] ? { id: rows[0].id, appSecret: rows[0].app_secret, currency: rows[0].currency } : undefined));
    found.catch(() => merchants.delete(apiKey));
    merchants.set(apiKey, found);
  }
  return found;
}

function priceOf(merchantId: string, skuId: string): Promise<bigint | undefined> {
  const key = `${merchantId}\n${skuId}`;
  let found = prices.get(key);
  if (!found) {
    found = pool
      .query<{ amount: string }>('select amount from prices where merchant_id = $1 and sku_id = $2', [merchantId, skuId])
      .then(({ rows }) => (rows[0] ? BigInt(rows[0].amount) : undefined));
    found.catch(() => prices.delete(key));
    prices.set(key, found);
  }
  return found;
}

interface Submit {
  outTradeNo: string;
  skuId: string;
  accountId: string;
  accountFields: Record<string, string>;
}

/** The submit's fields, or the refusal for the first one that is wrong. */
function readSubmit(body: Record<string, unknown>): Submit | { status: number; code: string; field: string } {
  for (const field of ['out_trade_no', 'sku_id', 'account_id', 'account_fields']) {
    if (body[field] === undefined || body[field] === null) return { status: 400, code: 'MISSING_REQUIRED_FIELD', field };
  }
  const { out_trade_no, sku_id, account_id, account_fields } = body;
  if (typeof out_trade_no !== 'string' || !OUT_TRADE_NO.test(out_trade_no)) return { status: 422, code: 'VALIDATION_FAILED', field: 'out_trade_no' };
  if (typeof sku_id !== 'string' || sku_id === '') return { status: 422, code: 'VALIDATION_FAILED', field: 'sku_id' };
  if (typeof account_id !== 'string' || account_id.length < 1 || account_id.length > 64) return { status: 422, code: 'VALIDATION_FAILED', field: 'account_id' };
  if (typeof account_fields !== 'object' || Array.isArray(account_fields) || Object.values(account_fields as object).some((v) => typeof v !== 'string')) {
    return { status: 422, code: 'VALIDATION_FAILED', field: 'account_fields' };
  }
  return { outTradeNo: out_trade_no, skuId: sku_id, accountId: account_id, accountFields: account_fields as Record<string, string> };
}

interface OrderRow {
  order_no: string;
  out_trade_no: string;
  status: string;
  sku_id: string;
  amount: string;
  account_id: string;
  account_fields: Record<string, string>;
  created_at: Date;
}

const ORDER_COLUMNS = 'order_no, out_trade_no, status, sku_id, amount, account_id, account_fields, created_at';

const orderView = (row: OrderRow, currency: string) => ({
  order_no: `C${row.order_no}`,
  out_trade_no: row.out_trade_no,
  status: row.status,
  sku_id: row.sku_id,
  amount: formatAmount(BigInt(row.amount)),
  currency,
  account_id: row.account_id,
  account_fields: row.account_fields,
  fail_code: null,
  fail_reason: null,
  created_at: isoTimestamp(row.created_at),
  completed_at: null,
});

type Outcome = { status: 202 | 200; order: OrderRow } | { status: 402 | 409; code: string };

/** The order and the freeze, in one transaction. */
async function placeOrder(client: PoolClient, merchant: Merchant, submit: Submit, amount: bigint): Promise<Outcome> {
  const values = [merchant.id, submit.outTradeNo, submit.skuId, submit.accountId, JSON.stringify(submit.accountFields)];
  await client.query('begin');
  const inserted = await client.query<OrderRow>(
    `insert into orders (merchant_id, out_trade_no, sku_id, account_id, account_fields, amount)
     values ($1, $2, $3, $4, $5, $6) on conflict (merchant_id, out_trade_no) do nothing returning ${ORDER_COLUMNS}`,
    [...values, amount.toString()],
  );
  if (inserted.rowCount === 0) {
    await client.query('rollback');
    const existing = await client.query<OrderRow & { same_target: boolean }>(
      `select ${ORDER_COLUMNS}, (sku_id = $3 and account_id = $4 and account_fields = $5::jsonb) as same_target
       from orders where merchant_id = $1 and out_trade_no = $2`,
      values,
    );
    const order = existing.rows[0];
    if (!order) throw new Error(`order ${submit.outTradeNo} conflicted but is not there`);
    return order.same_target ? { status: 200, order } : { status: 409, code: 'OUT_TRADE_NO_CONFLICT' };
  }
  const frozen = await client.query('update merchants set frozen = frozen + $1 where id = $2 and balance - frozen >= $1', [amount.toString(), merchant.id]);
  if (frozen.rowCount === 0) {
    await client.query('rollback');
    return { status: 402, code: 'INSUFFICIENT_BALANCE' };
  }
  if (fulfilment) await client.query(`insert into jobs (kind, order_no) values ('topup', $1)`, [inserted.rows[0].order_no]);
  await client.query('commit');
  fulfilment?.notify();
  return { status: 202, order: inserted.rows[0] };
}

async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  if ((request.url ?? '').split('?')[0] !== SUBMIT_PATH) return refuse(response, 404, 'NOT_FOUND');
  if (request.method !== 'POST') return refuse(response, 405, 'METHOD_NOT_ALLOWED');
  const raw = await readBody(request);
  if (raw === undefined) return refuse(response, 413, 'PAYLOAD_TOO_LARGE');
  let merchant: Merchant | undefined;
  const signed = await checkSignature(request, raw, async (apiKey) => (merchant = await merchantOf(apiKey))?.appSecret);
  if ('status' in signed) return refuse(response, signed.status, signed.code);
  const nonce = await pool.query(
    `insert into nonces (merchant_id, nonce, expires_at) values ($1, $2, now() + make_interval(secs => $3)) on conflict do nothing`,
    [merchant!.id, signed.nonce, 2 * TIMESTAMP_TOLERANCE_SECONDS],
  );
  if (nonce.rowCount === 0) return refuse(response, 401, 'NONCE_REUSED');

  const body = parseObject(raw);
  if (body === undefined) return refuse(response, 400, 'INVALID_JSON');
  const submit = readSubmit(body);
  if ('status' in submit) return refuse(response, submit.status, submit.code, submit.field);
  const amount = await priceOf(merchant!.id, submit.skuId);
  if (amount === undefined) return refuse(response, 422, 'SKU_NOT_FOUND', 'sku_id');

  const client = await pool.connect();
  let outcome: Outcome;
  try {
    outcome = await placeOrder(client, merchant!, submit, amount);
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
  client.release();
  if ('code' in outcome) return refuse(response, outcome.status, outcome.code);
  reply(response, outcome.status, {
    success: true,
    code: outcome.status === 202 ? 'ACCEPTED' : 'DUPLICATE',
    data: orderView(outcome.order, merchant!.currency),
  });
}

const server = http.createServer((request, response) => {
  handle(request, response).catch((error) => {
    console.error(`submit failed: ${error instanceof Error ? error.message : String(error)}`);
    if (!response.headersSent) refuse(response, 500, 'INTERNAL_ERROR');
  });
});
listen(server, 'CRUD');
fulfilment?.start();

const stop = () => {
  fulfilment?.stop();
  server.close(() => void pool.end().finally(() => process.exit(0)));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
