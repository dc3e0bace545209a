import { isoTimestamp } from '../../shared/clock';
import { formatAmount } from '../../shared/money';
import type { QueueRow } from '../../../projections/orders.queries';
import type { Names } from '../display-names/display-names';

/** An order in the reconciliation queue: waiting for a person since its upstream result became unknown. */
export interface QueuedOrderView {
  order_no: string;
  merchant_id: string;
  merchant_name: string | null;
  out_trade_no: string;
  sku_id: string;
  account_id: string;
  account_fields: Record<string, string>;
  amount: string;
  currency: string;
  upstream_attempts: number;
  /** Why the result is unknown, and what showed it. */
  reason: string | null;
  evidence: string | null;
  created_at: string;
  result_unknown_at: string;
  age_seconds: number;
}

/** A page of the queue, oldest first, with the total waiting. */
export interface QueuePageView {
  total: number;
  orders: QueuedOrderView[];
}

/** What the upstream said when asked again: its status, and whatever else it answered. */
export interface RequeryView {
  order_no: string;
  stage: string;
  upstream: { status: string } & Record<string, unknown>;
}

export const queuedOrderView = (r: QueueRow, names: Names): QueuedOrderView => ({
  order_no: r.order_no,
  merchant_id: r.merchant_id,
  merchant_name: names.merchant(r.merchant_id),
  out_trade_no: r.out_trade_no,
  sku_id: r.sku_id,
  account_id: r.account_id,
  account_fields: r.account_fields,
  amount: formatAmount(BigInt(r.amount)),
  currency: r.currency,
  upstream_attempts: r.upstream_attempts,
  reason: r.unknown_reason,
  evidence: r.unknown_evidence,
  created_at: isoTimestamp(r.created_at),
  result_unknown_at: isoTimestamp(r.result_unknown_at),
  age_seconds: r.age_seconds,
});
