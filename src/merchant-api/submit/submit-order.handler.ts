import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { OrderWorkflow, SubmitOrderResult } from '../../ledger/order/order-workflow';
import { SubmitOrder } from './submit-order.command';

@CommandHandler(SubmitOrder)
export class SubmitOrderHandler implements ICommandHandler<SubmitOrder> {
  constructor(private readonly workflow: OrderWorkflow) {}

  execute({ input }: SubmitOrder): Promise<SubmitOrderResult> {
    return this.workflow.submit(input);
  }
}
