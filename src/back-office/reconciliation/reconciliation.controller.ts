import { Body, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Pool } from 'pg';
import { UPSTREAM, UpstreamProvider } from '../../fulfilment';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { EVENT_STORE, EventStore, formatPosition } from '../../ledger/ports/event-store.port';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { loadAggregate } from '../../ledger/command-handling';
import { ResolveOrder } from '../../ledger/commands/ledger.commands';
import { merchantStatus, orderDecider } from '../../ledger/order/order.decider';
import { orderStream } from '../../ledger/streams';
import { isoTimestamp } from '../../shared/clock';
import { formatAmount } from '../../shared/money';
import { recordAudit } from '../audit/audit-trail';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { BodyPipe } from '../http/validate-body';
import { eventDataView } from '../orders/order.view';
import { ResolveOrderDto } from './resolve-order.dto';
import { inOneSnapshot, inTransaction } from '../../infrastructure/postgres/transactions';

interface QueueRow {
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

function pageParameter(raw: unknown, name: string, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 0 && value <= max)) throw new ApiError(422, 'VALIDATION_FAILED', `${name} must be an integer from 0 to ${max}`, name);
  return value;
}

/**
 * Orders whose upstream result is unknown wait here, money frozen, for a
 * person to decide. A resolution is an event carrying who, when and why;
 * the order then settles or releases exactly like an upstream outcome.
 */
@BackOfficeController()
@Roles('reconciler')
export class ReconciliationController {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(UPSTREAM) private readonly upstream: UpstreamProvider,
    private readonly commands: CommandBus,
  ) {}

  /** The queue, oldest first. */
  @Get('reconciliation/orders')
  async queue(@Query('limit') limit?: string, @Query('offset') offset?: string) {
    const take = pageParameter(limit, 'limit', 100, 500);
    const skip = pageParameter(offset, 'offset', 0, 1_000_000_000);
    // The page and the total as of one moment: read apart, the total could count an order the page lacks.
    const { rows, count } = await inOneSnapshot(this.pool, async (client) => ({
      rows: (
        await client.query<QueueRow>(
          `select *, extract(epoch from now() - result_unknown_at)::int as age_seconds from rm_orders
           where stage = 'unknown' order by result_unknown_at, order_no limit $1 offset $2`,
          [take, skip],
        )
      ).rows,
      count: (await client.query<{ n: number }>(`select count(*)::int as n from rm_orders where stage = 'unknown'`)).rows,
    }));
    return successEnvelope('OK', {
      total: count[0].n,
      orders: rows.map((r) => ({
        order_no: r.order_no,
        merchant_id: r.merchant_id,
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
      })),
    });
  }

  /** One order as staff see it: its state and its whole history from the event store. */
  @Get('orders/:order_no')
  @Roles('reconciler', 'auditor')
  async order(@Param(PathIdsPipe) { order_no: orderNo }: PathIds) {
    return successEnvelope('OK', await this.orderDetail(orderNo));
  }

  @Post('reconciliation/orders/:order_no/resolve')
  @HttpCode(200)
  async resolve(@Param(PathIdsPipe) { order_no: orderNo }: PathIds, @Body(BodyPipe) body: ResolveOrderDto, @CurrentStaff() by: StaffMember) {
    await this.commands.execute(new ResolveOrder(orderNo, body.outcome, by.staffId, body.note));
    // The event is the record; the audit row lists the action beside the other staff changes.
    await inTransaction(this.pool, (client) =>
      recordAudit(client, { staffId: by.staffId, action: 'order.resolved', target: `order:${orderNo}`, details: { outcome: body.outcome, note: body.note } }),
    );
    return successEnvelope('OK', await this.orderDetail(orderNo));
  }

  /** Asks the upstream what became of the order. Informs a person; settles nothing by itself. */
  @Post('reconciliation/orders/:order_no/requery')
  @HttpCode(200)
  async requery(@Param(PathIdsPipe) { order_no: orderNo }: PathIds) {
    const detail = await this.orderDetail(orderNo);
    const { kind, ...said } = await this.upstream.status(orderNo);
    return successEnvelope('OK', { order_no: orderNo, stage: detail.stage, upstream: { status: kind, ...eventDataView(said as Record<string, unknown>) } });
  }

  private async orderDetail(orderNo: string) {
    const { state } = await loadAggregate(this.store, orderStream(orderNo), orderDecider);
    const order = state.order;
    if (!order) throw new ApiError(404, 'ORDER_NOT_FOUND', `No order ${orderNo}`);
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
      fail_code: state.failCode ?? null,
      fail_reason: state.failReason ?? null,
      created_at: order.at,
      completed_at: state.completedAt ?? null,
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
