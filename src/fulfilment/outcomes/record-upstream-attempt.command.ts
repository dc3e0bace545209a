import { OrderOutcomeCommand } from '../../ledger/commands/order-outcome.command';

/** Records that the order is being sent to the upstream (one event per attempt). */
export class RecordUpstreamAttempt extends OrderOutcomeCommand {
  constructor(orderNo: string) {
    super(orderNo, { type: 'RecordUpstreamAttempt' });
  }
}
