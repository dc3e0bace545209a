import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../infrastructure/http/api-error';
import { loadAggregate } from '../../ledger/command-handling';
import { failureOf, isFinal, merchantStatus, orderDecider } from '../../ledger/order/order.decider';
import { EVENT_STORE, EventStore, formatPosition } from '../../ledger/ports/event-store.port';
import { orderStream } from '../../ledger/streams';
import { isoTimestamp } from '../../shared/clock';
import { formatAmount } from '../../shared/money';
import { eventDataView } from '../orders/order.view';

/** One order as staff see it: its state and its whole history, from the event store. */
@Injectable()
export class OrderDetailReader {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async detail(orderNo: string) {
    const { state } = await loadAggregate(this.store, orderStream(orderNo), orderDecider);
    if (state.stage === 'none') throw new ApiError(404, 'ORDER_NOT_FOUND', `No order ${orderNo}`);
    const { order } = state;
    const failure = failureOf(state);
    const history = await this.store.readStream(orderStream(orderNo));
    const resolved = [...history].reverse().find((e) => e.type === 'OrderResolved') as
      { data: { outcome: string; resolvedBy: string; at: string; note: string } } | undefined;
    return {
      order_no: order.orderNo,
      merchant_id: order.merchantId,
      out_trade_no: order.outTradeNo,
      stage: state.stage,
      status: merchantStatus(state.stage) ?? null,
      sku_id: order.skuId,
      account_id: order.accountId,
      account_fields: order.accountFields,
      amount: formatAmount(order.amount),
      currency: order.currency,
      attempt: order.attempt,
      upstream_attempts: state.upstreamAttempts,
      fail_code: failure?.failCode ?? null,
      fail_reason: failure?.failReason ?? null,
      created_at: order.at,
      completed_at: isFinal(state) ? state.completedAt : null,
      // Who settled an unknown result, when and why; null unless staff did.
      resolution: resolved
        ? { outcome: resolved.data.outcome, resolved_by: resolved.data.resolvedBy, resolved_at: resolved.data.at, note: resolved.data.note }
        : null,
      history: history.map((e) => ({
        revision: Number(e.revision),
        position: formatPosition(e.position),
        type: e.type,
        recorded_at: isoTimestamp(e.createdAt),
        data: eventDataView(e.data),
      })),
    };
  }
}
