import { OrderOutcomeCommand } from '../../ledger/commands/order-outcome.command';

/** The upstream delivered: deduct the frozen amount, the order succeeds. */
export class ConfirmDelivery extends OrderOutcomeCommand {
  constructor(orderNo: string) {
    super(orderNo, { type: 'ConfirmDelivery' });
  }
}
