import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../../shared/clock';
import { Loaded } from '../../command-handling';
import { CLOCK } from '../../ledger.tokens';
import { OrderState } from '../../order/order.decider';
import { OrderOutcomes } from '../../order/order-outcomes';
import { RecordUpstreamAttempt } from './record-upstream-attempt.command';

@CommandHandler(RecordUpstreamAttempt)
export class RecordUpstreamAttemptHandler implements ICommandHandler<RecordUpstreamAttempt, Loaded<OrderState>> {
  constructor(
    private readonly outcomes: OrderOutcomes,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ orderNo, known }: RecordUpstreamAttempt): Promise<Loaded<OrderState>> {
    return this.outcomes.record(orderNo, { type: 'RecordUpstreamAttempt', at: this.clock.now() }, { known, isRepeat: () => false });
  }
}
