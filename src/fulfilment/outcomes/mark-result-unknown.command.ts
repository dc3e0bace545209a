import { Loaded } from '../../ledger/command-handling';
import { OrderOutcomeCommand } from '../../ledger/commands/order-outcome.command';
import { OrderState } from '../../ledger/order/order.decider';

/** The upstream result is unknown: funds stay frozen until staff resolve it. */
export class MarkResultUnknown extends OrderOutcomeCommand {
  /** `evidence`: what the upstream said or did, for reconciliation staff. */
  constructor(orderNo: string, reason: string, evidence?: string, known?: Loaded<OrderState>) {
    super(orderNo, { type: 'MarkResultUnknown', reason, evidence }, known);
  }
}
