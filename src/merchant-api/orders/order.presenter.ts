import { MerchantStatus } from '../../ledger/order/order.decider';
import { isoTimestamp } from '../../shared/clock';
import { formatAmount } from '../../shared/money';

/** The order as merchants see it (CONTRACT §1 "Order object"). */
export interface OrderView {
  order_no: string;
  out_trade_no: string;
  status: MerchantStatus;
  sku_id: string;
  amount: string;
  currency: string;
  account_id: string;
  account_fields: Record<string, string>;
  fail_code: string | null;
  fail_reason: string | null;
  created_at: string;
  completed_at: string | null;
}

export interface OrderFacts {
  orderNo: string;
  outTradeNo: string;
  status: MerchantStatus;
  skuId: string;
  amount: bigint;
  currency: string;
  accountId: string;
  accountFields: Record<string, string>;
  failCode?: string | null;
  failReason?: string | null;
  createdAt: string | Date;
  completedAt?: string | Date | null;
}

export function presentOrder(o: OrderFacts): OrderView {
  const failed = o.status === 'failed';
  return {
    order_no: o.orderNo,
    out_trade_no: o.outTradeNo,
    status: o.status,
    sku_id: o.skuId,
    amount: formatAmount(o.amount),
    currency: o.currency,
    account_id: o.accountId,
    account_fields: o.accountFields,
    fail_code: failed ? (o.failCode ?? null) : null,
    fail_reason: failed ? (o.failReason ?? null) : null,
    created_at: isoTimestamp(new Date(o.createdAt)),
    completed_at: o.completedAt ? isoTimestamp(new Date(o.completedAt)) : null,
  };
}
