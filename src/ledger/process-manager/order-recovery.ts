import { EventStore } from '../ports/event-store.port';
import { HeldFunds, RecoveryCandidates } from '../ports/recovery-candidates.port';
import { loadAggregate } from '../command-handling';
import { orderDecider } from '../order/order.decider';
import { OrderSteps } from '../order/order-steps';
import { orderStream } from '../streams';

export interface RecoveryReport {
  ordersAdvanced: number;
  holdsReleased: number;
}

/** How many candidates of each kind one sweep takes on; the next sweep takes the rest. */
const SWEEP_LIMIT = 1000;

/**
 * The process manager for orders a crash left between two appends. The read
 * models only nominate candidates; every action is decided again from the
 * order's and the wallet's streams, so acting on a stale or lagging read
 * model is harmless.
 */
export class OrderRecovery {
  constructor(
    private readonly candidates: RecoveryCandidates,
    private readonly store: EventStore,
    private readonly steps: OrderSteps,
  ) {}

  async sweep(graceMs: number): Promise<RecoveryReport> {
    const report: RecoveryReport = { ordersAdvanced: 0, holdsReleased: 0 };
    for (const orderNo of await this.candidates.stuckOrders(graceMs, SWEEP_LIMIT)) {
      await this.steps.advance(orderNo);
      report.ordersAdvanced++;
    }
    for (const hold of await this.candidates.strayHolds(graceMs, SWEEP_LIMIT)) {
      if (await this.releaseIfStray(hold)) report.holdsReleased++;
    }
    return report;
  }

  private async releaseIfStray({ merchantId, orderNo, attempt }: HeldFunds): Promise<boolean> {
    const { state } = await loadAggregate(this.store, orderStream(orderNo), orderDecider);
    if (state.stage === 'placed' && state.order.attempt === attempt) {
      await this.steps.advance(orderNo);
      return false;
    }
    const refusedOrReplaced = state.stage === 'none' || state.order.attempt !== attempt || state.stage === 'refused';
    if (!refusedOrReplaced) return false;
    await this.steps.releaseStrayHold(merchantId, orderNo, attempt);
    return true;
  }
}
