import { Pool, PoolClient } from 'pg';
import type { OrderStage } from '../src/ledger/order/order.decider';
import { inOneSnapshot } from '../src/infrastructure/postgres/transactions';
import { Conditions } from '../src/infrastructure/postgres/conditions';
import type { OrderReadModelRow } from './orders.projection';

/**
 * Every read and write of rm_orders outside the projection that writes it:
 * the merchant's order query, the back office's search and reconciliation
 * queue, the process manager's stuck orders and the verification's rows.
 */

/** An order's row if it is the merchant's (undefined: not in the read model yet, or another merchant's). */
export async function merchantOrderRow(pool: Pool, orderNo: string, merchantId: string): Promise<OrderReadModelRow | undefined> {
  const { rows } = await pool.query<OrderReadModelRow>('select * from rm_orders where order_no = $1 and merchant_id = $2', [orderNo, merchantId]);
  return rows[0];
}

// ---------------------------------------------------------------------------
// The back office.

/** A row of the order search: the read model's row and its sort key. */
export interface OrderRow extends OrderReadModelRow {
  /** created_at as Postgres prints it, full precision: the cursor's sort key. */
  sort_at: string;
}

/** The order search's filters, already checked; each is optional and they combine with "and". */
export interface OrderSearch {
  merchantId?: string;
  orderNo?: string;
  outTradeNo?: string;
  accountId?: string;
  /** The stages a merchant-facing status covers. */
  stages?: readonly OrderStage[];
  stage?: OrderStage;
  createdFrom?: Date;
  createdTo?: Date;
  completedFrom?: Date;
  completedTo?: Date;
  /** The sort key (sort_at, order_no) of the last row of the previous page. */
  after?: readonly string[];
  limit: number;
}

/** Up to `limit` rows after the cursor, newest first. */
export async function searchOrders(pool: Pool, search: OrderSearch): Promise<OrderRow[]> {
  const where = new Conditions()
    .addIf(search.merchantId, 'merchant_id = ?')
    .addIf(search.orderNo, 'order_no = ?')
    .addIf(search.outTradeNo, 'out_trade_no = ?')
    .addIf(search.accountId, 'account_id = ?')
    .addIf(search.stages, 'stage = any(?)')
    .addIf(search.stage, 'stage = ?')
    .addIf(search.createdFrom, 'created_at >= ?')
    .addIf(search.createdTo, 'created_at < ?')
    .addIf(search.completedFrom, 'completed_at >= ?')
    .addIf(search.completedTo, 'completed_at < ?');
  if (search.after) where.add('(created_at, order_no) < (?::timestamptz, ?)', ...search.after);
  const { rows } = await pool.query<OrderRow>(
    `select *, created_at::text as sort_at from rm_orders ${where.where()} order by created_at desc, order_no desc limit ${where.next(search.limit)}`,
    where.values,
  );
  return rows;
}

export interface QueueRow {
  order_no: string;
  merchant_id: string;
  out_trade_no: string;
  sku_id: string;
  account_id: string;
  account_fields: Record<string, string>;
  amount: string;
  currency: string;
  upstream_attempts: number;
  unknown_reason: string | null;
  unknown_evidence: string | null;
  created_at: Date;
  result_unknown_at: Date;
  age_seconds: number;
}

/**
 * A page of the orders whose result is unknown, oldest first, and the total
 * as of one moment: read apart, the total could count an order the page lacks.
 */
export async function unknownResultPage(pool: Pool, limit: number, offset: number): Promise<{ rows: QueueRow[]; total: number }> {
  return inOneSnapshot(pool, async (client) => ({
    rows: (
      await client.query<QueueRow>(
        `select *, extract(epoch from now() - result_unknown_at)::int as age_seconds from rm_orders
           where awaiting_clerk_since is not null order by awaiting_clerk_since, order_no limit $1 offset $2`,
        [limit, offset],
      )
    ).rows,
    total: (await client.query<{ n: number }>(`select count(*)::int as n from rm_orders where awaiting_clerk_since is not null`)).rows[0].n,
  }));
}

/** The order that has waited longest for a person, and how many wait (undefined: none). */
export async function oldestUnknownResult(
  pool: Pool,
): Promise<{ order_no: string; merchant_id: string; result_unknown_at: Date; age_seconds: number; total: number } | undefined> {
  const { rows } = await pool.query<{ order_no: string; merchant_id: string; result_unknown_at: Date; age_seconds: number; total: number }>(
    `select order_no, merchant_id, result_unknown_at, extract(epoch from now() - result_unknown_at)::int as age_seconds,
                count(*) over ()::int as total
         from rm_orders where awaiting_clerk_since is not null order by awaiting_clerk_since, order_no limit 1`,
  );
  return rows[0];
}

/**
 * The reconciliation queue's size, the age in seconds of its oldest order and
 * that order (unknown_orders, unknown_oldest_age, unknown_oldest_no), from the
 * queue's own index: scalar subqueries for the operations dashboard's
 * statement of the queues.
 */
export const UNKNOWN_QUEUE_COLUMNS = `(select count(*) from rm_orders where awaiting_clerk_since is not null) as unknown_orders,
              (select extract(epoch from now() - min(awaiting_clerk_since))::float8 from rm_orders where awaiting_clerk_since is not null) as unknown_oldest_age,
              (select order_no from rm_orders where awaiting_clerk_since is not null order by awaiting_clerk_since, order_no limit 1) as unknown_oldest_no`;

export interface UnknownQueueColumns {
  unknown_orders: string;
  unknown_oldest_age: number | null;
  unknown_oldest_no: string | null;
}

/** Which unknown-result orders a bulk re-query takes; each filter is optional and they combine with "and". */
export interface UnknownResultFilter {
  merchantId?: string;
  createdFrom?: Date;
  createdTo?: Date;
  orderNos?: readonly string[];
}

/** An order of the reconciliation queue as a bulk re-query records it. */
export interface UnknownResultOrder {
  order_no: string;
  merchant_id: string;
  amount: string;
  currency: string;
}

/** Up to `limit` orders of the queue that the filter selects, oldest result first (the queue's order). */
export async function unknownResultOrders(pool: Pool, filter: UnknownResultFilter, limit: number): Promise<UnknownResultOrder[]> {
  const where = new Conditions()
    .add(`awaiting_clerk_since is not null`)
    .addIf(filter.merchantId, 'merchant_id = ?')
    .addIf(filter.createdFrom, 'created_at >= ?')
    .addIf(filter.createdTo, 'created_at < ?')
    .addIf(filter.orderNos, 'order_no = any(?::text[])');
  const { rows } = await pool.query<UnknownResultOrder>(
    `select order_no, merchant_id, amount::text, currency from rm_orders ${where.where()}
       order by awaiting_clerk_since, order_no limit ${where.next(limit)}`,
    where.values,
  );
  return rows;
}

/** Our side of an upstream report's matching: an order as the read model has it. */
export interface ReconciliationOrderRow {
  order_no: string;
  merchant_id: string;
  stage: OrderStage;
  amount: string;
  currency: string;
  upstream_attempts: number;
  fail_code: string | null;
  resolved_by: string | null;
  accepted_at: Date | null;
  completed_at: Date | null;
}

/**
 * The orders an upstream report for [from, to) is matched against: those its
 * lines name, and those that may have been sent upstream in the window (at
 * least one send, accepted or completed in it). The sends are looked for
 * among orders created from a day before the window, through the index on
 * created_at: an order's upstream part ends within hours of its creation
 * (FULFILMENT_MAX_ATTEMPTS sends, each retry at most 60 s later).
 */
export async function reconciliationCandidates(pool: Pool, orderNos: readonly string[], window: { from: Date; to: Date }): Promise<ReconciliationOrderRow[]> {
  const { rows } = await pool.query<ReconciliationOrderRow>(
    `select order_no, merchant_id, stage, amount::text, currency, upstream_attempts, fail_code, resolved_by, accepted_at, completed_at
       from rm_orders where order_no = any($1::text[])
     union
     select order_no, merchant_id, stage, amount::text, currency, upstream_attempts, fail_code, resolved_by, accepted_at, completed_at
       from rm_orders
       where created_at >= $2::timestamptz - interval '1 day' and created_at < $3 and upstream_attempts > 0
         and (accepted_at >= $2 and accepted_at < $3 or completed_at >= $2 and completed_at < $3)`,
    [orderNos, window.from, window.to],
  );
  return rows;
}

// ---------------------------------------------------------------------------
// The process manager.

/** Orders left between two of their appends for longer than the grace period, the longest first. */
export async function stuckOrderNos(pool: Pool, graceMs: number, limit: number): Promise<string[]> {
  const { rows } = await pool.query<{ order_no: string }>(
    `select order_no from rm_orders
       where step_pending_since < now() - make_interval(secs => $1::float8 / 1000)
       order by step_pending_since limit $2`,
    [graceMs, limit],
  );
  return rows.map((row) => row.order_no);
}

// ---------------------------------------------------------------------------
// The verification: the columns it compares, as text.

/** The compared columns of an order row, amount as text. */
export type ComparedOrderRow = Record<string, string | number | null> & { order_no: string };

const ORDER_COLUMNS = 'order_no, merchant_id, stage, attempt, amount::text, fail_code';

/** `where` with the merchant's scope ($1) when there is one. */
function scoped(merchantId: string | undefined, ...conditions: string[]): string {
  const all = [merchantId === undefined ? '' : 'merchant_id = $1', ...conditions].filter(Boolean);
  return all.length > 0 ? `where ${all.join(' and ')}` : '';
}

/** The rows of orders not final (of one merchant, or all), on the snapshot's connection. */
export async function openOrderRows(client: PoolClient, merchantId: string | undefined): Promise<ComparedOrderRow[]> {
  const { rows } = await client.query<ComparedOrderRow>(
    `select ${ORDER_COLUMNS} from rm_orders ${scoped(merchantId, `stage not in ('succeeded', 'failed')`)}`,
    merchantId === undefined ? [] : [merchantId],
  );
  return rows;
}

/** How many final (succeeded or failed) order rows each merchant has (or the one merchant), on the snapshot's connection. */
export async function finalOrderCounts(client: PoolClient, merchantId: string | undefined): Promise<{ merchant_id: string; n: string }[]> {
  const { rows } = await client.query<{ merchant_id: string; n: string }>(
    `select merchant_id, count(*)::text as n from rm_orders ${scoped(merchantId, `stage in ('succeeded', 'failed')`)} group by merchant_id`,
    merchantId === undefined ? [] : [merchantId],
  );
  return rows;
}

/** The columns of an order row the verification compares. */
const ORDER_COMPARED = ['merchant_id', 'stage', 'attempt', 'amount', 'fail_code'] as const;

/**
 * The rows of these orders that are not as expected, compared by Postgres:
 * per differing order its expected order_no and its row (found false: no row at all).
 */
export async function differingOrderRows(
  pool: Pool,
  expected: readonly { orderNo: string; row: Readonly<Record<string, unknown>> }[],
): Promise<(ComparedOrderRow & { expected_no: string; found: boolean })[]> {
  const { rows } = await pool.query<ComparedOrderRow & { expected_no: string; found: boolean }>(
    `select e.order_no as expected_no, o.order_no is not null as found, o.order_no, o.merchant_id, o.stage, o.attempt, o.amount::text, o.fail_code
     from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[], $6::text[]) as e(order_no, merchant_id, stage, attempt, amount, fail_code)
     left join rm_orders o on o.order_no = e.order_no
     where (o.merchant_id, o.stage, o.attempt, o.amount, o.fail_code) is distinct from (e.merchant_id, e.stage, e.attempt, e.amount, e.fail_code)`,
    [expected.map((e) => e.orderNo), ...ORDER_COMPARED.map((c) => expected.map((e) => e.row[c]))],
  );
  return rows;
}

/** The current rows of these orders. */
export async function orderRowsOf(pool: Pool, orderNos: readonly string[]): Promise<ComparedOrderRow[]> {
  const { rows } = await pool.query<ComparedOrderRow>(`select ${ORDER_COLUMNS} from rm_orders where order_no = any($1::text[])`, [orderNos]);
  return rows;
}

/** Every order number the read model lists for a merchant. */
export async function orderNosOf(pool: Pool, merchantId: string): Promise<string[]> {
  const { rows } = await pool.query<{ order_no: string }>('select order_no from rm_orders where merchant_id = $1', [merchantId]);
  return rows.map((r) => r.order_no);
}

/** A page of a merchant's final order rows, in order_no order after `after`. */
export async function finalOrderRowsOf(pool: Pool, merchantId: string, after: string, limit: number): Promise<ComparedOrderRow[]> {
  const { rows } = await pool.query<ComparedOrderRow>(
    `select ${ORDER_COLUMNS} from rm_orders where merchant_id = $1 and stage in ('succeeded', 'failed') and order_no > $2 order by order_no limit $3`,
    [merchantId, after, limit],
  );
  return rows;
}
