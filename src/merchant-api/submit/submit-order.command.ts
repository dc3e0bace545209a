import { Command } from '@nestjs/cqrs';
import { SubmitOrderInput, SubmitOrderResult } from '../../ledger/order/order-workflow';

/** Idempotent on (merchant, out_trade_no): see OrderWorkflow.submit. */
export class SubmitOrder extends Command<SubmitOrderResult> {
  constructor(readonly input: SubmitOrderInput) {
    super();
  }
}
