/**
 * Checks that the CRUD server does what the comparison assumes: before the
 * load, that it answers a submit, a duplicate, a conflict, a replayed nonce, a
 * bad signature and an unfunded wallet as the service would; after it, that
 * its ledger adds up.
 */
import { Pool } from 'pg';
import { newNonce, sign } from '../../src/merchant-client/signing';
import { crudTotals, crudWholeLifeTotals } from './crud-store';
import { ACCOUNT_ID, Credentials, SUBMIT_PATH } from './load-generator';

async function submit(url: string, merchant: Credentials, fields: object, nonce = newNonce(), secret = merchant.appSecret) {
  const body = JSON.stringify(fields);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const response = await fetch(`${url}${SUBMIT_PATH}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': merchant.apiKey,
      'x-timestamp': timestamp,
      'x-nonce': nonce,
      'x-signature': sign(secret, timestamp, nonce, SUBMIT_PATH, body),
    },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const json = (await response.json()) as { code?: string };
  return `${response.status} ${json.code}`;
}

/** Sends the checks' requests; throws naming the first wrong answer. Accepts exactly one order. */
export async function crudSmokeCheck(url: string, funded: Credentials, unfunded: Credentials, skuId: string): Promise<void> {
  const order = { out_trade_no: `smoke-${Date.now()}`, sku_id: skuId, account_id: ACCOUNT_ID, account_fields: {} };
  const nonce = newNonce();
  const cases: Array<[string, () => Promise<string>, string]> = [
    ['a new order', () => submit(url, funded, order, nonce), '202 ACCEPTED'],
    ['the same order again', () => submit(url, funded, order), '200 DUPLICATE'],
    ['its out_trade_no for another account', () => submit(url, funded, { ...order, account_id: '87654321' }), '409 OUT_TRADE_NO_CONFLICT'],
    ['a replayed nonce', () => submit(url, funded, { ...order, out_trade_no: `${order.out_trade_no}-b` }, nonce), '401 NONCE_REUSED'],
    ['a wrong signature', () => submit(url, funded, order, newNonce(), 'not-the-secret'), '401 INVALID_SIGNATURE'],
    ['an order beyond the balance', () => submit(url, unfunded, order), '402 INSUFFICIENT_BALANCE'],
    ['the refused out_trade_no again', () => submit(url, unfunded, order), '402 INSUFFICIENT_BALANCE'],
  ];
  for (const [what, send, expected] of cases) {
    const got = await send();
    if (got !== expected) throw new Error(`CRUD server self-check: ${what} answered ${got}, expected ${expected}`);
  }
}

/** After the load: one order per 202, and the wallets' frozen funds equal the orders' amounts. */
export async function crudLedgerCheck(pool: Pool, accepted: number): Promise<{ ok: boolean; text: string }> {
  const totals = await crudTotals(pool);
  const ok = totals.orders === accepted && totals.frozen === totals.ordered;
  return {
    ok,
    text:
      `CRUD self-check ${ok ? 'passed' : 'FAILED'}: ${totals.orders} orders for ${accepted} replies 202, ` +
      `frozen ${totals.frozen} = sum of the orders' amounts ${totals.ordered} (minor units)` +
      (ok ? '; duplicate, conflict, replayed nonce, bad signature and 402 answered as the service would.' : '.'),
  };
}

/**
 * After the whole-life load and its drain: every deduction is a succeeded
 * order, the frozen funds are the open orders', and every final order was
 * called back and acknowledged.
 */
export async function crudWholeLifeCheck(pool: Pool, deposited: bigint): Promise<{ ok: boolean; text: string }> {
  const t = await crudWholeLifeTotals(pool);
  const ok = deposited - t.balances === t.succeeded && t.frozen === t.open && t.notCalledBack === 0 && t.jobsLeft === 0;
  return {
    ok,
    text:
      `whole-life peer money check ${ok ? 'passed' : 'FAILED'}: deducted ${deposited - t.balances} = succeeded orders ${t.succeeded}, ` +
      `frozen ${t.frozen} = open orders ${t.open} (minor units); ${t.final} final orders, ${t.notCalledBack} not called back, ${t.jobsLeft} jobs left.`,
  };
}
