import { Inject, Type } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../shared/clock';
import { CLOCK } from '../ledger.tokens';
import { Loaded } from '../command-handling';
import { OrderState } from '../order/order.decider';
import { OrderWorkflow } from '../order/order-workflow';
import { OrderOutcomeCommand } from './order-outcome.command';

/**
 * The handler of one outcome command class. Every outcome is handled the
 * same way, but Nest registers a handler per command class, so each
 * capability builds its own from this and lists it in its module.
 */
export function orderOutcomeHandler(command: Type<OrderOutcomeCommand>): Type<ICommandHandler<OrderOutcomeCommand, Loaded<OrderState>>> {
  @CommandHandler(command)
  class OrderOutcomeHandler implements ICommandHandler<OrderOutcomeCommand, Loaded<OrderState>> {
    constructor(
      private readonly workflow: OrderWorkflow,
      @Inject(CLOCK) private readonly clock: Clock,
    ) {}

    execute({ orderNo, outcome, known }: OrderOutcomeCommand): Promise<Loaded<OrderState>> {
      return this.workflow.decideOutcome(orderNo, { ...outcome, at: this.clock.now() }, known);
    }
  }
  // Named after its command in Nest's logs and errors.
  Object.defineProperty(OrderOutcomeHandler, 'name', { value: `${command.name}Handler` });
  return OrderOutcomeHandler;
}
