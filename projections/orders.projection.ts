import type { OrderStage } from '../src/ledger/order/order.decider';
import { assertNever } from '../src/shared/decider';
import { LedgerEvent } from './ledger-event';
import { Projection, SqlValue, Statement, TableNames } from './projection';

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
}

/**
 * Orders by order_no and by (merchant, out_trade_no), with the internal
 * stage; merchants see placed/refused attempts as no order at all.
 */
export const ordersProjection: Projection<Tables> = {
  name: 'orders',
  tables: ['rm_orders'],
  schema: [
    (t) => `
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
    (t) => `
    alter table ${t.rm_orders} add column unknown_reason text, add column unknown_evidence text;`,
    // The back office's order search: newest first, and by the identifiers a support ticket quotes.
    (t) => `
    create index on ${t.rm_orders} (created_at desc, order_no desc);
    create index on ${t.rm_orders} (out_trade_no);
    create index on ${t.rm_orders} (account_id);`,
  ],
  apply: applyOrderEvent,
};

function applyOrderEvent(ledgerEvent: LedgerEvent, t: TableNames<Tables>): Statement[] {
  if (ledgerEvent.stream !== 'order') return [];
  const { orderNo, event } = ledgerEvent;
  const update = (set: string, values: SqlValue[] = []): Statement[] => [
    { text: `update ${t.rm_orders} set ${set}, updated_at = $2 where order_no = $1`, values: [orderNo, event.data.at, ...values] },
  ];

  switch (event.type) {
    case 'OrderPlaced': {
      const d = event.data;
      // A new attempt after a refusal replaces the refused one.
      return [
        {
          text: `insert into ${t.rm_orders} (order_no, merchant_id, out_trade_no, attempt, stage, sku_id, account_id,
             account_fields, amount, currency, created_at, updated_at)
           values ($1, $2, $3, $4, 'placed', $5, $6, $7, $8, $9, $10, $10)
           on conflict (order_no) do update set attempt = excluded.attempt, stage = 'placed', sku_id = excluded.sku_id,
             account_id = excluded.account_id, account_fields = excluded.account_fields, amount = excluded.amount,
             currency = excluded.currency, refusal_code = null, created_at = excluded.created_at, updated_at = excluded.updated_at`,
          values: [orderNo, d.merchantId, d.outTradeNo, d.attempt, d.skuId, d.accountId, JSON.stringify(d.accountFields), d.amount, d.currency, d.at],
        },
      ];
    }
    case 'OrderAccepted':
      return update(`stage = 'accepted', accepted_at = $2`);
    case 'OrderRefused':
      return update(`stage = 'refused', refusal_code = $3`, [event.data.code]);
    case 'OrderSentUpstream':
      return update(`stage = 'sent', upstream_attempts = $3`, [event.data.upstreamAttempt]);
    case 'OrderResultUnknown':
      return update(`stage = 'unknown', result_unknown_at = $2, unknown_reason = $3, unknown_evidence = $4`, [event.data.reason, event.data.evidence ?? null]);
    case 'OrderDeliveryConfirmed':
      return update(`stage = 'succeeding'`);
    case 'OrderDeliveryFailed':
      return update(`stage = 'failing', fail_code = $3, fail_reason = $4`, [event.data.failCode, event.data.failReason]);
    case 'OrderResolved':
      return update(
        event.data.outcome === 'success'
          ? `stage = 'succeeding', resolved_by = $3, resolution_note = $4`
          : `stage = 'failing', resolved_by = $3, resolution_note = $4`,
        [event.data.resolvedBy, event.data.note],
      );
    case 'OrderSucceeded':
      return update(`stage = 'succeeded', completed_at = $2`);
    case 'OrderFailed':
      return update(`stage = 'failed', completed_at = $2, fail_code = $3, fail_reason = $4`, [event.data.failCode, event.data.failReason]);
    default:
      return assertNever(event);
  }
}
