import type { OrderEvent, OrderStage } from '../src/ledger/order/order.decider';
import { assertNever } from '../src/shared/decider';
import { LedgerEvent } from './ledger-event';
import { Projection, SqlValue, Statement, TableNames } from './projection';
import { unnestRows } from './statement-batch';

type Tables = 'rm_orders';

/** A row of rm_orders as `select *` returns it (bigint amount as text): the one type every reader of the table uses. */
export interface OrderReadModelRow {
  order_no: string;
  merchant_id: string;
  out_trade_no: string;
  attempt: number;
  stage: OrderStage;
  sku_id: string;
  account_id: string;
  account_fields: Record<string, string>;
  amount: string;
  currency: string;
  refusal_code: string | null;
  upstream_attempts: number;
  fail_code: string | null;
  fail_reason: string | null;
  resolved_by: string | null;
  resolution_note: string | null;
  unknown_reason: string | null;
  unknown_evidence: string | null;
  created_at: Date;
  accepted_at: Date | null;
  result_unknown_at: Date | null;
  completed_at: Date | null;
  updated_at: Date;
  /** result_unknown_at while the order waits for a clerk (stage unknown), else null: the reconciliation queue's key. */
  awaiting_clerk_since: Date | null;
  /** When the order entered a stage its next ledger step should follow at once (placed: the freeze; succeeding, failing: the settlement), else null: the recovery sweep's key. */
  step_pending_since: Date | null;
}

/**
 * Orders by order_no and by (merchant, out_trade_no), with the internal
 * stage; merchants see placed/refused attempts as no order at all.
 */
export const ordersProjection: Projection<Tables> = {
  name: 'orders',
  tables: ['rm_orders'],
  migrations: [
    {
      id: 'projections/orders/001-tables',
      sql: (t) => `
    create table ${t.rm_orders} (
      order_no          text        primary key,
      merchant_id       text        not null,
      out_trade_no      text        not null,
      attempt           int         not null,
      stage             text        not null,
      sku_id            text        not null,
      account_id        text        not null,
      account_fields    jsonb       not null,
      amount            bigint      not null,
      currency          text        not null,
      refusal_code      text,
      upstream_attempts int         not null default 0,
      fail_code         text,
      fail_reason       text,
      resolved_by       text,
      resolution_note   text,
      created_at        timestamptz not null,
      accepted_at       timestamptz,
      result_unknown_at timestamptz,
      completed_at      timestamptz,
      updated_at        timestamptz not null,
      unique (merchant_id, out_trade_no)
    );
    create index on ${t.rm_orders} (stage, updated_at) where stage not in ('succeeded', 'failed', 'refused');`,
    },
    {
      id: 'projections/orders/002',
      sql: (t) => `
    alter table ${t.rm_orders} add column unknown_reason text, add column unknown_evidence text;`,
    },
    // The back office's order search: newest first, and by the identifiers a support ticket quotes.
    {
      id: 'projections/orders/003',
      sql: (t) => `
    create index on ${t.rm_orders} (created_at desc, order_no desc);
    create index on ${t.rm_orders} (out_trade_no);
    create index on ${t.rm_orders} (account_id);`,
    },
    // The reconciliation queue in its order: its oldest order, and its size, without reading each waiting order's row.
    {
      id: 'projections/orders/004',
      sql: (t) => `
    create index on ${t.rm_orders} (result_unknown_at, order_no) where stage = 'unknown';`,
    },
    // Room on each page for the row's later versions: an order's row is updated twice soon after its insert,
    // and on a full page each update moved the row to another page (an extra WAL record, another page dirtied).
    {
      id: 'projections/orders/005-fillfactor',
      sql: (t) => `alter table ${t.rm_orders} set (fillfactor = 70);`,
    },
    // Updates on the page of their row, and no index to touch (HOT): the two indexes that named the stage, which
    // every update changes, give way to two keys only a reconciliation or a stalled step sets.
    {
      id: 'projections/orders/006-hot-updates',
      sql: (t) => `
    alter table ${t.rm_orders} add column awaiting_clerk_since timestamptz, add column step_pending_since timestamptz;
    update ${t.rm_orders} set awaiting_clerk_since = result_unknown_at where stage = 'unknown';
    update ${t.rm_orders} set step_pending_since = updated_at where stage in ('placed', 'succeeding', 'failing');
    create index on ${t.rm_orders} (awaiting_clerk_since, order_no) where awaiting_clerk_since is not null;
    create index on ${t.rm_orders} (step_pending_since) where step_pending_since is not null;
    do $$
    declare index_name text;
    begin
      for index_name in
        select i.relname from pg_index x join pg_class i on i.oid = x.indexrelid
        where x.indrelid = '${t.rm_orders}'::regclass and pg_get_expr(x.indpred, x.indrelid) like '%stage%'
      loop
        execute format('drop index %I', index_name);
      end loop;
    end $$;`,
    },
  ],
  apply: (event, t) => writeOrders([event], t),
  applyAll: writeOrders,
};

/** What a new attempt after a refusal leaves as it was: the order's identity. Its other columns the OrderPlaced replaces. */
const KEPT_ON_NEW_ATTEMPT: ReadonlySet<string> = new Set(['merchant_id', 'out_trade_no']);

/** One write to an order's row: an OrderPlaced's insert (or replacement) with what later events set, or an update. */
interface OrderWrite {
  orderNo: string;
  placed: boolean;
  columns: Map<OrderColumn, SqlValue>;
}

type OrderColumn = Exclude<keyof OrderReadModelRow, 'order_no'>;

/** The SQL type of each column an event sets: an update's VALUES list carries literals, which need one. */
const COLUMN_TYPES: Readonly<Record<OrderColumn, string>> = {
  merchant_id: 'text',
  out_trade_no: 'text',
  attempt: 'int',
  stage: 'text',
  sku_id: 'text',
  account_id: 'text',
  account_fields: 'jsonb',
  amount: 'bigint',
  currency: 'text',
  refusal_code: 'text',
  upstream_attempts: 'int',
  fail_code: 'text',
  fail_reason: 'text',
  resolved_by: 'text',
  resolution_note: 'text',
  unknown_reason: 'text',
  unknown_evidence: 'text',
  created_at: 'timestamptz',
  accepted_at: 'timestamptz',
  result_unknown_at: 'timestamptz',
  completed_at: 'timestamptz',
  updated_at: 'timestamptz',
  awaiting_clerk_since: 'timestamptz',
  step_pending_since: 'timestamptz',
};

/**
 * The writes a batch's order events make, one per order where it can: an
 * event sets columns to values it carries, never to something computed from
 * the row, so an order's events in a batch fold into one insert or one
 * update (OrderPlaced and OrderAccepted, OrderDeliveryConfirmed and
 * OrderSucceeded are appended together). A new OrderPlaced starts a new
 * write after the order's earlier one, as it replaces only some columns.
 *
 * Orders written once in the batch (nearly all) go set-wise: one multi-row
 * statement per kind of write and set of columns. An order written twice
 * (refused, then placed again) keeps one statement per write, in order, as
 * one statement cannot write a row twice. Different orders are different
 * rows, so the statements' order between orders does not matter.
 */
function writeOrders(events: readonly LedgerEvent[], t: TableNames<Tables>): Statement[] {
  const writes: OrderWrite[] = [];
  const open = new Map<string, OrderWrite>();
  /** Orders with more than one write in the batch: they keep a statement per write. */
  const rewritten = new Set<string>();
  for (const ledgerEvent of events) {
    if (ledgerEvent.stream !== 'order') continue;
    const { orderNo, event } = ledgerEvent;
    const placed = event.type === 'OrderPlaced';
    let write = open.get(orderNo);
    if (!write || placed) {
      if (write) rewritten.add(orderNo);
      write = { orderNo, placed, columns: new Map() };
      writes.push(write);
      open.set(orderNo, write);
    }
    for (const [column, value] of Object.entries(columnsSetBy(event))) write.columns.set(column as OrderColumn, value);
  }
  const statements: Statement[] = [];
  const alike = new Map<string, OrderWrite[]>();
  for (const write of writes) {
    if (rewritten.has(write.orderNo)) {
      statements.push(write.placed ? placement([write], t) : update([write], t));
      continue;
    }
    const key = `${write.placed ? 'placed' : 'update'} ${[...write.columns.keys()].sort().join(',')}`;
    const group = alike.get(key);
    if (group) group.push(write);
    else alike.set(key, [write]);
  }
  for (const group of alike.values()) statements.push(group[0].placed ? placement(group, t) : update(group, t));
  return statements;
}

/** The column names the writes set (the same for each), and each write's row of values, order_no first. */
function rowsOf(writes: readonly OrderWrite[]): { names: OrderColumn[]; rows: SqlValue[][] } {
  const names = [...writes[0].columns.keys()];
  return { names, rows: writes.map(({ orderNo, columns }) => [orderNo, ...names.map((name) => columns.get(name))]) };
}

function placement(writes: readonly OrderWrite[], t: TableNames<Tables>): Statement {
  const { names, rows } = rowsOf(writes);
  const source = unnestRows(rows, ['text', ...names.map((name) => COLUMN_TYPES[name])]);
  return {
    text: `insert into ${t.rm_orders} (order_no, ${names.join(', ')}) select * from ${source.source}
       on conflict (order_no) do update set ${names
         .filter((name) => !KEPT_ON_NEW_ATTEMPT.has(name))
         .map((name) => `${name} = excluded.${name}`)
         .join(', ')}`,
    values: source.values,
  };
}

function update(writes: readonly OrderWrite[], t: TableNames<Tables>): Statement {
  const { names, rows } = rowsOf(writes);
  const source = unnestRows(rows, ['text', ...names.map((name) => COLUMN_TYPES[name])]);
  return {
    text: `update ${t.rm_orders} o set ${names.map((name) => `${name} = w.${name}`).join(', ')}
       from ${source.source} as w (order_no, ${names.join(', ')})
       where o.order_no = w.order_no`,
    values: source.values,
  };
}

/** The columns an order event sets, and to what. */
function columnsSetBy(event: OrderEvent): Partial<Record<keyof OrderReadModelRow, SqlValue>> {
  const at = event.data.at;
  switch (event.type) {
    case 'OrderPlaced': {
      const d = event.data;
      return {
        merchant_id: d.merchantId,
        out_trade_no: d.outTradeNo,
        attempt: d.attempt,
        stage: 'placed',
        sku_id: d.skuId,
        account_id: d.accountId,
        account_fields: JSON.stringify(d.accountFields),
        amount: d.amount,
        currency: d.currency,
        refusal_code: null,
        created_at: at,
        updated_at: at,
        awaiting_clerk_since: null,
        step_pending_since: at,
      };
    }
    // The normal life (accepted, sent, succeeded or failed, each pair of steps usually in one batch) leaves the two keys
    // null throughout, so its updates change no indexed column.
    case 'OrderAccepted':
      return { stage: 'accepted', accepted_at: at, updated_at: at, step_pending_since: null };
    case 'OrderRefused':
      return { stage: 'refused', refusal_code: event.data.code, updated_at: at, step_pending_since: null };
    case 'OrderSentUpstream':
      return { stage: 'sent', upstream_attempts: event.data.upstreamAttempt, updated_at: at };
    case 'OrderResultUnknown':
      return {
        stage: 'unknown',
        result_unknown_at: at,
        unknown_reason: event.data.reason,
        unknown_evidence: event.data.evidence ?? null,
        updated_at: at,
        awaiting_clerk_since: at,
      };
    case 'OrderDeliveryConfirmed':
      return { stage: 'succeeding', updated_at: at, step_pending_since: at };
    case 'OrderDeliveryFailed':
      return { stage: 'failing', fail_code: event.data.failCode, fail_reason: event.data.failReason, updated_at: at, step_pending_since: at };
    case 'OrderResolved':
      return {
        stage: event.data.outcome === 'success' ? 'succeeding' : 'failing',
        resolved_by: event.data.resolvedBy,
        resolution_note: event.data.note,
        updated_at: at,
        awaiting_clerk_since: null,
        step_pending_since: at,
      };
    case 'OrderSucceeded':
      return { stage: 'succeeded', completed_at: at, updated_at: at, step_pending_since: null };
    case 'OrderFailed':
      return {
        stage: 'failed',
        completed_at: at,
        fail_code: event.data.failCode,
        fail_reason: event.data.failReason,
        updated_at: at,
        step_pending_since: null,
      };
    default:
      return assertNever(event);
  }
}
