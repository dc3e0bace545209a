import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../../shared/clock';
import { Loaded } from '../../command-handling';
import { CLOCK } from '../../ledger.tokens';
import { OrderState } from '../../order/order.decider';
import { OrderOutcomes } from '../../order/order-outcomes';
import { MarkResultUnknown } from './mark-result-unknown.command';

@CommandHandler(MarkResultUnknown)
export class MarkResultUnknownHandler implements ICommandHandler<MarkResultUnknown, Loaded<OrderState>> {
  constructor(
    private readonly outcomes: OrderOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ orderNo, reason, evidence, known }: MarkResultUnknown): Promise<Loaded<OrderState>> {
    const isRepeat = (order: OrderState) => order.stage === 'unknown';
    return this.outcomes.record(orderNo, { type: 'MarkResultUnknown', reason, evidence, at: this.clock.now() }, { known, isRepeat });
  }
}
