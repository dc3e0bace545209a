import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../../shared/clock';
import { Loaded } from '../../command-handling';
import { CLOCK } from '../../ledger.tokens';
import { OrderState } from '../../order/order.decider';
import { OrderOutcomes } from '../../order/order-outcomes';
import { ResolveOrder } from './resolve-order.command';

@CommandHandler(ResolveOrder)
export class ResolveOrderHandler implements ICommandHandler<ResolveOrder, Loaded<OrderState>> {
  constructor(
    private readonly outcomes: OrderOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ orderNo, outcome, staffId, note, backing }: ResolveOrder): Promise<Loaded<OrderState>> {
    // A staff decision is never repeated silently: a second resolution is refused.
    const command = { type: 'ResolveOrder', outcome, resolvedBy: staffId, note, ...backing, at: this.clock.now() } as const;
    return this.outcomes.record(orderNo, command, { isRepeat: () => false });
  }
}
