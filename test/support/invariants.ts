import { Pool } from 'pg';
import { EventStore } from '../../src/ledger/ports/event-store.port';
import { readSettledLog } from './settled-log';
import { decodeEvent } from '../../src/ledger/event-codec';
import { OrderEvent, orderDecider, PlacedOrderState } from '../../src/ledger/order/order.decider';
import { ORDER_STREAM_PREFIX, WALLET_STREAM_PREFIX } from '../../src/ledger/streams';
import { holdKey, OpenedWallet, WalletEvent, walletDecider } from '../../src/ledger/wallet/wallet.decider';

export interface LedgerFacts {
  events: number;
  wallets: Map<string, OpenedWallet>;
  /** Every order in the log, as its events leave it (an order's events begin with its placement). */
  orders: Map<string, PlacedOrderState>;
  violations: string[];
}

const ACTIVE = new Set(['accepted', 'sent', 'unknown', 'succeeding', 'failing']);

/**
 * Folds the whole log independently of the service and checks DESIGN.md's
 * invariants 1 and 2 on it. `settled` asks for a quiet ledger: no order
 * half-way between two appends and no stray hold.
 */
export async function checkEventInvariants(store: EventStore, { settled = true } = {}): Promise<LedgerFacts> {
  const violations: string[] = [];
  const wallets = new Map<string, OpenedWallet>();
  const orders = new Map<string, PlacedOrderState>();
  const deposits = new Map<string, bigint>();
  const deductions = new Map<string, bigint>();
  /** Credits less debits by staff, outside any hold. */
  const adjustments = new Map<string, bigint>();
  const frozenEvents = new Map<string, number>();
  /** The order attempt of each hold key. */
  const holdsFor = new Map<string, { orderNo: string; attempt: number }>();
  const closingEvents = new Map<string, number>();
  const acceptedPerOrder = new Map<string, number>();
  const { events } = await readSettledLog(store);

  for (const recorded of events) {
    if (recorded.streamId.startsWith(WALLET_STREAM_PREFIX)) {
      const merchant = recorded.streamId.slice(WALLET_STREAM_PREFIX.length);
      const event = decodeEvent<WalletEvent>(recorded);
      const state = walletDecider.evolve(wallets.get(merchant) ?? walletDecider.initialState(), event);
      wallets.set(merchant, state);
      if (event.type === 'FundsDeposited') deposits.set(merchant, (deposits.get(merchant) ?? 0n) + event.data.amount);
      if (event.type === 'FrozenFundsDeducted') deductions.set(merchant, (deductions.get(merchant) ?? 0n) + event.data.amount);
      if (event.type === 'WalletAdjusted') {
        const { direction, amount } = event.data;
        adjustments.set(merchant, (adjustments.get(merchant) ?? 0n) + (direction === 'credit' ? amount : -amount));
      }
      if (event.type === 'FundsFrozen') {
        const key = holdKey(event.data.orderNo, event.data.attempt);
        frozenEvents.set(key, (frozenEvents.get(key) ?? 0) + 1);
        holdsFor.set(key, { orderNo: event.data.orderNo, attempt: event.data.attempt });
      }
      if (event.type === 'FrozenFundsDeducted' || event.type === 'FrozenFundsReleased') {
        const key = holdKey(event.data.orderNo, event.data.attempt);
        closingEvents.set(key, (closingEvents.get(key) ?? 0) + 1);
      }
      if (state.balance - state.frozen < 0n) violations.push(`wallet ${merchant} overdrawn at revision ${recorded.revision}`);
    } else if (recorded.streamId.startsWith(ORDER_STREAM_PREFIX)) {
      const orderNo = recorded.streamId.slice(ORDER_STREAM_PREFIX.length);
      const event = decodeEvent<OrderEvent>(recorded);
      const state = orderDecider.evolve(orders.get(orderNo) ?? orderDecider.initialState(), event);
      if (state.stage !== 'none') orders.set(orderNo, state);
      if (event.type === 'OrderAccepted') acceptedPerOrder.set(orderNo, (acceptedPerOrder.get(orderNo) ?? 0) + 1);
    }
  }

  for (const [merchant, wallet] of wallets) {
    const expected = (deposits.get(merchant) ?? 0n) - (deductions.get(merchant) ?? 0n) + (adjustments.get(merchant) ?? 0n);
    if (wallet.balance !== expected) violations.push(`wallet ${merchant}: balance ${wallet.balance} != deposits - deductions + adjustments ${expected}`);
    const held = [...wallet.holds.values()].reduce((a, b) => a + b, 0n);
    if (wallet.frozen !== held) violations.push(`wallet ${merchant}: frozen ${wallet.frozen} != open holds ${held}`);
  }
  for (const [key, count] of frozenEvents) if (count > 1) violations.push(`hold ${key} frozen ${count} times`);
  for (const [key, count] of closingEvents) if (count > 1) violations.push(`hold ${key} deducted/released ${count} times`);
  for (const [orderNo, count] of acceptedPerOrder) if (count > 1) violations.push(`order ${orderNo} accepted ${count} times`);

  for (const [orderNo, order] of orders) {
    const placed = order.order;
    const wallet = wallets.get(placed.merchantId);
    const key = holdKey(orderNo, placed.attempt);
    const hold = wallet?.holds.get(key);
    const closed = wallet?.closedHolds.get(key)?.closed;
    // A decided order may already be deducted or released, only its final append missing.
    const settledEarly = (order.stage === 'succeeding' && closed === 'deducted') || (order.stage === 'failing' && closed === 'released');
    if (ACTIVE.has(order.stage) && hold !== placed.amount && !settledEarly) {
      violations.push(`order ${orderNo} is ${order.stage} but holds ${hold}`);
    }
    if (order.stage === 'succeeded' && closed !== 'deducted') violations.push(`order ${orderNo} succeeded but its hold is ${closed}`);
    if (order.stage === 'failed' && closed !== 'released') violations.push(`order ${orderNo} failed but its hold is ${closed}`);
    if (settled && (order.stage === 'placed' || order.stage === 'succeeding' || order.stage === 'failing')) {
      violations.push(`order ${orderNo} left half-done at ${order.stage}`);
    }
  }
  if (settled) {
    // Every open hold belongs to an order that is accepted and not yet final.
    for (const [merchant, wallet] of wallets) {
      for (const key of wallet.holds.keys()) {
        const { orderNo, attempt } = holdsFor.get(key)!;
        const order = orders.get(orderNo);
        if (!order || !ACTIVE.has(order.stage) || order.order.attempt !== attempt) {
          violations.push(`wallet ${merchant}: stray hold ${key} (order ${order?.stage ?? 'missing'})`);
        }
      }
    }
  }
  return { events: events.length, wallets, orders, violations };
}

/** Compares the read models with the folded log: wallets, holds, statement lines and orders. */
export async function checkReadModels(pool: Pool, facts: LedgerFacts): Promise<string[]> {
  const violations: string[] = [];
  const wallets = await pool.query<{ merchant_id: string; balance: string; frozen: string; available: string }>(
    'select merchant_id, balance::text, frozen::text, available::text from rm_wallets',
  );
  if (wallets.rows.length !== facts.wallets.size) violations.push(`rm_wallets has ${wallets.rows.length} rows, log has ${facts.wallets.size} wallets`);
  for (const row of wallets.rows) {
    const w = facts.wallets.get(row.merchant_id);
    if (!w) {
      violations.push(`rm_wallets has unknown wallet ${row.merchant_id}`);
      continue;
    }
    if (BigInt(row.balance) !== w.balance || BigInt(row.frozen) !== w.frozen || BigInt(row.available) !== w.balance - w.frozen) {
      violations.push(`rm_wallets ${row.merchant_id}: ${row.balance}/${row.frozen}/${row.available} != ${w.balance}/${w.frozen}`);
    }
    const holds = await pool.query<{ n: number; sum: string | null }>(
      'select count(*)::int as n, sum(amount)::text as sum from rm_wallet_holds where merchant_id = $1',
      [row.merchant_id],
    );
    if (holds.rows[0].n !== w.holds.size || BigInt(holds.rows[0].sum ?? '0') !== w.frozen) {
      violations.push(`rm_wallet_holds ${row.merchant_id}: ${holds.rows[0].n} holds for ${holds.rows[0].sum}`);
    }
    const last = await pool.query<{ balance_after: string; frozen_after: string }>(
      'select balance_after::text, frozen_after::text from rm_statement_lines where merchant_id = $1 order by revision desc limit 1',
      [row.merchant_id],
    );
    if (last.rows[0] && (BigInt(last.rows[0].balance_after) !== w.balance || BigInt(last.rows[0].frozen_after) !== w.frozen)) {
      violations.push(`rm_statement_lines ${row.merchant_id}: last line ${last.rows[0].balance_after}/${last.rows[0].frozen_after}`);
    }
  }
  const orders = await pool.query<{ order_no: string; stage: string; attempt: number; amount: string }>(
    'select order_no, stage, attempt, amount::text from rm_orders',
  );
  if (orders.rows.length !== facts.orders.size) violations.push(`rm_orders has ${orders.rows.length} rows, log has ${facts.orders.size} orders`);
  for (const row of orders.rows) {
    const o = facts.orders.get(row.order_no);
    if (!o || o.stage !== row.stage || o.order.attempt !== row.attempt || o.order.amount !== BigInt(row.amount)) {
      violations.push(`rm_orders ${row.order_no}: ${row.stage}#${row.attempt} != ${o?.stage}#${o?.order?.attempt}`);
    }
  }
  return violations;
}
