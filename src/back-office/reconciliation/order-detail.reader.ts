import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { adjustmentRevisionsOfOrder } from '../../../projections/wallets.queries';
import { ApiError } from '../../infrastructure/http/api-error';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { decodeEvent } from '../../ledger/event-codec';
import { failureOf, isFinal, MerchantStatus, merchantStatus, orderDecider, OrderEvent, PlacedOrderState } from '../../ledger/order/order.decider';
import { EVENT_STORE, EventStore, formatPosition, RecordedEvent } from '../../ledger/ports/event-store.port';
import { orderStream, walletStream } from '../../ledger/streams';
import { isoTimestamp } from '../../shared/clock';
import { fold } from '../../shared/decider';
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
  /** The second person who approved it under the four-eyes rule; absent when none was needed. */
  approved_by?: string;
  approved_by_name?: string | null;
  /** What it rests on (an upstream report's line, a re-query's answer), snake_case; absent for a person's own finding. */
  evidence?: Record<string, unknown>;
}

/** A correction of the order on its merchant's wallet (WalletAdjusted naming the order): the order itself stays final. */
export interface OrderAdjustmentView {
  /** Where it is in the wallet's stream, as on the statement. */
  revision: number;
  position: string;
  recorded_at: string;
  reference: string;
  direction: 'credit' | 'debit';
  amount: string;
  reason: string;
  note: string;
  adjusted_by: string;
  adjusted_by_name: string | null;
  approved_by: string | null;
  approved_by_name: string | null;
  at: string;
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
  /** The name of the second person who approved it (an OrderResolved's approved_by); null when none did. */
  approved_by_name: string | null;
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
  /** The wallet adjustments that correct this order, first to last (from the statement's read model). */
  adjustments: OrderAdjustmentView[];
}

/** One order as staff see it: its state and its whole history, from the event store. */
@Injectable()
export class OrderDetailReader {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly names: DisplayNames,
  ) {}

  async detail(orderNo: string): Promise<OrderDetailView> {
    // One read: the state is folded from the history the page shows.
    const history = await this.store.readStream(orderStream(orderNo));
    const state = fold(
      orderDecider,
      history.map((e) => decodeEvent<OrderEvent>(e)),
    );
    if (state.stage === 'none') throw new ApiError(404, 'ORDER_NOT_FOUND', `No order ${orderNo}`);
    const { order } = state;
    const failure = failureOf(state);
    const resolved = [...history].reverse().find((e) => e.type === 'OrderResolved') as
      { data: { outcome: string; resolvedBy: string; at: string; note: string; approvedBy?: string; evidence?: Record<string, unknown> } } | undefined;
    // Only a final order can be adjusted (ORDER_NOT_FINAL): the others need not look.
    const adjustments = isFinal(state) ? await this.adjustmentsOf(order.merchantId, orderNo) : [];
    const names = await this.names.of({
      merchants: [order.merchantId],
      staff: [...history, ...adjustments].flatMap((e) => [staffOf(e), approverOf(e)]),
    });
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
            // Absent rather than null when there is none: the resolution's shape before the four-eyes rule stays as it was.
            ...(resolved.data.approvedBy === undefined
              ? {}
              : { approved_by: resolved.data.approvedBy, approved_by_name: names.staff(resolved.data.approvedBy) }),
            ...(resolved.data.evidence === undefined ? {} : { evidence: eventDataView(resolved.data.evidence) }),
          }
        : null,
      history: history.map((e) => ({
        revision: Number(e.revision),
        position: formatPosition(e.position),
        type: e.type,
        recorded_at: isoTimestamp(e.createdAt),
        data: eventDataView(e.data),
        staff_name: names.staff(staffOf(e)),
        approved_by_name: names.staff(approverOf(e)),
      })),
      adjustments: adjustments.map((e) => {
        const d = e.data as { reference: string; direction: 'credit' | 'debit'; amount: string; reason: string; note: string; by: string; at: string };
        const approvedBy = approverOf(e);
        return {
          revision: Number(e.revision),
          position: formatPosition(e.position),
          recorded_at: isoTimestamp(e.createdAt),
          reference: d.reference,
          direction: d.direction,
          amount: formatAmount(BigInt(d.amount)),
          reason: d.reason,
          note: d.note,
          adjusted_by: d.by,
          adjusted_by_name: names.staff(d.by),
          approved_by: approvedBy,
          approved_by_name: names.staff(approvedBy),
          at: d.at,
        };
      }),
    };
  }

  /**
   * The adjustments that name the order: where they are, from the statement's
   * read model (indexed by order); then those few events from the wallet's
   * stream, never the whole stream.
   */
  private async adjustmentsOf(merchantId: string, orderNo: string): Promise<RecordedEvent[]> {
    const revisions = await adjustmentRevisionsOfOrder(this.pool, merchantId, orderNo);
    const events = await Promise.all(revisions.map((revision) => this.store.readStream(walletStream(merchantId), revision, 1)));
    return events.flat().filter((e) => e.type === 'WalletAdjusted');
  }
}

/** The staff member an event names: who resolved the order (`resolvedBy`), or who moved the money (`by`). */
function staffOf(event: { data: Record<string, unknown> }): string | null {
  const id = event.data.resolvedBy ?? event.data.by;
  return typeof id === 'string' ? id : null;
}

/** The second person an event names, who approved it under the four-eyes rule. */
function approverOf(event: { data: Record<string, unknown> }): string | null {
  return typeof event.data.approvedBy === 'string' ? event.data.approvedBy : null;
}
