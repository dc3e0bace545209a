import { Pool } from 'pg';
import { EventStore } from '../../ledger/ports/event-store.port';
import { deriveOrderNo } from '../../ledger/order/order-number';
import { failureOf, isFinal, merchantStatus, orderDecider, OrderState } from '../../ledger/order/order.decider';
import { loadAggregate } from '../../ledger/command-handling';
import { orderStream } from '../../ledger/streams';
import { merchantOrderRow } from '../../../projections/orders.queries';
import { OrderFacts } from './order.presenter';

/**
 * Finds a merchant's order: from the read model (rm_orders), or, when the
 * projection has not caught up with it yet, from the order's own stream. A query straight
 * after a 202 therefore always finds the order, on any instance.
 */
export class OrderReader {
  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
  ) {}

  /** order_no is derived from (merchant, out_trade_no), so either names one stream. */
  orderNoFor(merchantId: string, ids: { orderNo?: string; outTradeNo?: string }): string | undefined {
    const derived = ids.outTradeNo === undefined ? undefined : deriveOrderNo(merchantId, ids.outTradeNo);
    if (ids.orderNo !== undefined && derived !== undefined && ids.orderNo !== derived) return undefined;
    return ids.orderNo ?? derived;
  }

  async find(merchantId: string, orderNo: string): Promise<OrderFacts | undefined> {
    const row = await merchantOrderRow(this.pool, orderNo, merchantId);
    const status = row && merchantStatus(row.stage);
    if (row && status) {
      return {
        orderNo: row.order_no,
        outTradeNo: row.out_trade_no,
        status,
        skuId: row.sku_id,
        amount: BigInt(row.amount),
        currency: row.currency,
        accountId: row.account_id,
        accountFields: row.account_fields,
        failCode: row.fail_code,
        failReason: row.fail_reason,
        createdAt: row.created_at,
        completedAt: row.completed_at,
      };
    }
    // Not in the read model yet: the order's own stream.
    const { state } = await loadAggregate(this.store, orderStream(orderNo), orderDecider);
    return state.stage !== 'none' && state.order.merchantId === merchantId ? factsOf(state) : undefined;
  }
}

/** The merchant's view of an order state, or undefined when there is no order to show. */
export function factsOf(state: OrderState): OrderFacts | undefined {
  const status = merchantStatus(state.stage);
  if (!status || state.stage === 'none') return undefined;
  const { order } = state;
  const failure = failureOf(state);
  return {
    orderNo: order.orderNo,
    outTradeNo: order.outTradeNo,
    status,
    skuId: order.skuId,
    amount: order.amount,
    currency: order.currency,
    accountId: order.accountId,
    accountFields: order.accountFields,
    failCode: failure?.failCode,
    failReason: failure?.failReason,
    createdAt: order.at,
    completedAt: isFinal(state) ? state.completedAt : undefined,
  };
}
