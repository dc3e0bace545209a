import { Loaded } from '../../ledger/command-handling';
import { OrderOutcomeCommand } from '../../ledger/commands/order-outcome.command';
import { OrderState } from '../../ledger/order/order.decider';

/** Records that the order is being sent to the upstream (one event per attempt). */
export class RecordUpstreamAttempt extends OrderOutcomeCommand {
  constructor(orderNo: string, known?: Loaded<OrderState>) {
    super(orderNo, { type: 'RecordUpstreamAttempt' }, known);
  }
}
