import { formatAmount } from '../../shared/money';
import { isoTimestamp } from '../../shared/clock';
import { MerchantStatus, merchantStatus, OrderStage } from '../../ledger/order/order.decider';
import type { Names } from '../display-names/display-names';
import type { OrderRow } from './orders.reader';

/** Stored event fields that hold minor units; the back office shows them as two-decimal strings. */
const MONEY_FIELDS = new Set(['amount']);

const snakeCase = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * An event's data as the back office shows it: snake_case keys and money as
 * "1.20", like every other reply. Only the top level is renamed: nested
 * objects (account fields) are the merchant's own keys.
 */
export function eventDataView(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [snakeCase(key), MONEY_FIELDS.has(key) && typeof value === 'string' ? formatAmount(BigInt(value)) : value]),
  );
}

const time = (date: Date | null) => (date ? isoTimestamp(date) : null);

/** One row of the order search: the merchant's view of the order plus its internal stage. */
export interface OrderSummaryView {
  order_no: string;
  merchant_id: string;
  merchant_name: string | null;
  out_trade_no: string;
  /** What the merchant sees; null for a refused submit, which never became an order. */
  status: MerchantStatus | null;
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
  resolved_by_name: string | null;
  created_at: string;
  result_unknown_at: string | null;
  completed_at: string | null;
}

export const orderSummaryView = (row: OrderRow, names: Names): OrderSummaryView => ({
  order_no: row.order_no,
  merchant_id: row.merchant_id,
  merchant_name: names.merchant(row.merchant_id),
  out_trade_no: row.out_trade_no,
  status: merchantStatus(row.stage) ?? null,
  stage: row.stage,
  sku_id: row.sku_id,
  account_id: row.account_id,
  account_fields: row.account_fields,
  amount: formatAmount(BigInt(row.amount)),
  currency: row.currency,
  refusal_code: row.refusal_code,
  upstream_attempts: row.upstream_attempts,
  fail_code: row.fail_code,
  fail_reason: row.fail_reason,
  resolved_by: row.resolved_by,
  resolved_by_name: names.staff(row.resolved_by),
  created_at: isoTimestamp(row.created_at),
  result_unknown_at: time(row.result_unknown_at),
  completed_at: time(row.completed_at),
});
