import { OrderOutcomeCommand } from '../../ledger/commands/order-outcome.command';

/** Reconciliation staff settle an unknown-result order. */
export class ResolveOrder extends OrderOutcomeCommand {
  constructor(orderNo: string, outcome: 'success' | 'failed', staffId: string, note: string) {
    super(orderNo, { type: 'ResolveOrder', outcome, resolvedBy: staffId, note });
  }
}
