import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../infrastructure/http/api-error';
import { loadAggregate } from '../../ledger/command-handling';
import { failureOf, isFinal, MerchantStatus, merchantStatus, orderDecider, PlacedOrderState } from '../../ledger/order/order.decider';
import { EVENT_STORE, EventStore, formatPosition } from '../../ledger/ports/event-store.port';
import { orderStream } from '../../ledger/streams';
import { isoTimestamp } from '../../shared/clock';
import { formatAmount } from '../../shared/money';
import { DisplayNames } from '../display-names/display-names';
import { eventDataView } from '../orders/order.view';

/** Who settled an unknown result, when and why. */
export interface OrderResolutionView {
  outcome: string;
  resolved_by: string;
  resolved_by_name: string | null;
  resolved_at: string;
  note: string;
}

/** One event of an order's stream, its data as the back office shows it (eventDataView). */
export interface OrderEventView {
  revision: number;
  position: string;
  type: string;
  recorded_at: string;
  data: Record<string, unknown>;
  /** The name of the staff member the event names (an OrderResolved's resolved_by); null for an event no person made. */
  staff_name: string | null;
}

/** One order as staff see it: its state and its whole history, from the event store. */
export interface OrderDetailView {
  order_no: string;
  merchant_id: string;
  merchant_name: string | null;
  out_trade_no: string;
  stage: PlacedOrderState['stage'];
  status: MerchantStatus | null;
  sku_id: string;
  account_id: string;
  account_fields: Record<string, string>;
  amount: string;
  currency: string;
  attempt: number;
  upstream_attempts: number;
  fail_code: string | null;
  fail_reason: string | null;
  created_at: string;
  completed_at: string | null;
  /** Null unless staff settled the order. */
  resolution: OrderResolutionView | null;
  history: OrderEventView[];
}

/** One order as staff see it: its state and its whole history, from the event store. */
@Injectable()
export class OrderDetailReader {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly names: DisplayNames,
  ) {}

  async detail(orderNo: string): Promise<OrderDetailView> {
    const { state } = await loadAggregate(this.store, orderStream(orderNo), orderDecider);
    if (state.stage === 'none') throw new ApiError(404, 'ORDER_NOT_FOUND', `No order ${orderNo}`);
    const { order } = state;
    const failure = failureOf(state);
    const history = await this.store.readStream(orderStream(orderNo));
    const resolved = [...history].reverse().find((e) => e.type === 'OrderResolved') as
      { data: { outcome: string; resolvedBy: string; at: string; note: string } } | undefined;
    const names = await this.names.of({ merchants: [order.merchantId], staff: history.map(staffOf) });
    return {
      order_no: order.orderNo,
      merchant_id: order.merchantId,
      merchant_name: names.merchant(order.merchantId),
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
        ? {
            outcome: resolved.data.outcome,
            resolved_by: resolved.data.resolvedBy,
            resolved_by_name: names.staff(resolved.data.resolvedBy),
            resolved_at: resolved.data.at,
            note: resolved.data.note,
          }
        : null,
      history: history.map((e) => ({
        revision: Number(e.revision),
        position: formatPosition(e.position),
        type: e.type,
        recorded_at: isoTimestamp(e.createdAt),
        data: eventDataView(e.data),
        staff_name: names.staff(staffOf(e)),
      })),
    };
  }
}

/** The staff member an event names: who resolved the order (`resolvedBy`), or who moved the money (`by`). */
function staffOf(event: { data: Record<string, unknown> }): string | null {
  const id = event.data.resolvedBy ?? event.data.by;
  return typeof id === 'string' ? id : null;
}
