import { Pool } from 'pg';
import { EventStore } from '../ports/event-store.port';
import { loadAggregate } from '../command-handling';
import { orderDecider } from '../order/order.decider';
import { OrderWorkflow } from '../order/order-workflow';
import { orderStream } from '../streams';

export interface RecoveryReport {
  ordersAdvanced: number;
  holdsReleased: number;
}

/**
 * The process manager for orders a crash left between two appends. The read
 * models only nominate candidates; every action is decided again from the
 * order's and the wallet's streams, so acting on a stale or lagging read
 * model is harmless.
 */
export class OrderRecovery {
  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
    private readonly workflow: OrderWorkflow,
  ) {}

  async sweep(graceMs: number): Promise<RecoveryReport> {
    const report: RecoveryReport = { ordersAdvanced: 0, holdsReleased: 0 };
    // Placed but neither accepted nor refused; outcome decided but not settled.
    const stuck = await this.pool.query<{ order_no: string }>(
      `select order_no from rm_orders
       where stage in ('placed', 'succeeding', 'failing') and updated_at < now() - make_interval(secs => $1::float8 / 1000)
       order by updated_at limit 1000`,
      [graceMs],
    );
    for (const { order_no } of stuck.rows) {
      await this.workflow.advance(order_no);
      report.ordersAdvanced++;
    }
    // Funds frozen for an attempt that is not the order's accepted one.
    const holds = await this.pool.query<{ merchant_id: string; order_no: string; attempt: number }>(
      `select h.merchant_id, h.order_no, h.attempt from rm_wallet_holds h
       left join rm_orders o on o.order_no = h.order_no
       where (o.order_no is null or o.attempt <> h.attempt or o.stage in ('placed', 'refused'))
         and h.frozen_at < now() - make_interval(secs => $1::float8 / 1000)
       limit 1000`,
      [graceMs],
    );
    for (const hold of holds.rows) {
      if (await this.releaseIfStray(hold.merchant_id, hold.order_no, hold.attempt)) report.holdsReleased++;
    }
    return report;
  }

  private async releaseIfStray(merchantId: string, orderNo: string, attempt: number): Promise<boolean> {
    const { state } = await loadAggregate(this.store, orderStream(orderNo), orderDecider);
    if (state.order?.attempt === attempt && state.stage === 'placed') {
      await this.workflow.advance(orderNo);
      return false;
    }
    const refusedOrReplaced = state.order?.attempt !== attempt || state.stage === 'refused';
    if (!refusedOrReplaced) return false;
    await this.workflow.releaseStrayHold(merchantId, orderNo, attempt);
    return true;
  }
}
