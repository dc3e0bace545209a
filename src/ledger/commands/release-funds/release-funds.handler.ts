import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../../shared/clock';
import { Loaded } from '../../command-handling';
import { CLOCK } from '../../ledger.tokens';
import { failureOf, OrderState } from '../../order/order.decider';
import { OrderOutcomes } from '../../order/order-outcomes';
import { ReleaseFunds } from './release-funds.command';

@CommandHandler(ReleaseFunds)
export class ReleaseFundsHandler implements ICommandHandler<ReleaseFunds, Loaded<OrderState>> {
  constructor(
    private readonly outcomes: OrderOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ orderNo, failCode, failReason, known }: ReleaseFunds): Promise<Loaded<OrderState>> {
    // The same failure recorded already (a retried command) is not an error; another outcome is.
    const isRepeat = (order: OrderState) => failureOf(order)?.failCode === failCode;
    return this.outcomes.record(orderNo, { type: 'RecordDeliveryFailure', failCode, failReason, at: this.clock.now() }, { known, isRepeat });
  }
}
