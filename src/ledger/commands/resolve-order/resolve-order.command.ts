import { Command } from '@nestjs/cqrs';
import { Loaded } from '../../command-handling';
import { OrderState, ResolutionEvidence } from '../../order/order.decider';

/**
 * Reconciliation staff settle an order whose upstream result is unknown:
 * success deducts the frozen amount, failed releases it. The decision is an
 * event on the order with who decided and why.
 */
export class ResolveOrder extends Command<Loaded<OrderState>> {
  constructor(
    readonly orderNo: string,
    readonly outcome: 'success' | 'failed',
    readonly staffId: string,
    readonly note: string,
    /** What the decision rests on, and the second person who approved it under the four-eyes rule. */
    readonly backing: { evidence?: ResolutionEvidence; approvedBy?: string } = {},
  ) {
    super();
  }
}
