import { Loaded } from '../../ledger/command-handling';
import { OrderOutcomeCommand } from '../../ledger/commands/order-outcome.command';
import { OrderState } from '../../ledger/order/order.decider';

/** The upstream delivered: deduct the frozen amount, the order succeeds. */
export class ConfirmDelivery extends OrderOutcomeCommand {
  constructor(orderNo: string, known?: Loaded<OrderState>) {
    super(orderNo, { type: 'ConfirmDelivery' }, known);
  }
}
