import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../../shared/clock';
import { Loaded } from '../../command-handling';
import { CLOCK } from '../../ledger.tokens';
import { OrderState } from '../../order/order.decider';
import { OrderOutcomes } from '../../order/order-outcomes';
import { SettleOrder } from './settle-order.command';

@CommandHandler(SettleOrder)
export class SettleOrderHandler implements ICommandHandler<SettleOrder, Loaded<OrderState>> {
  constructor(
    private readonly outcomes: OrderOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ orderNo, known }: SettleOrder): Promise<Loaded<OrderState>> {
    // A delivery recorded already (a retried command) is not an error.
    const isRepeat = (order: OrderState) => order.stage === 'succeeding' || order.stage === 'succeeded';
    return this.outcomes.record(orderNo, { type: 'ConfirmDelivery', at: this.clock.now() }, { known, isRepeat });
  }
}
