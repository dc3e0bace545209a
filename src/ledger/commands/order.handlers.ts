import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../shared/clock';
import { OrderState } from '../order/order.decider';
import { OrderWorkflow, SubmitOrderResult } from '../order/order-workflow';
import { CLOCK } from '../ledger.tokens';
import { MarkResultUnknown, RecordUpstreamAttempt, ReleaseFunds, ResolveOrder, SettleOrder, SubmitOrder } from './ledger.commands';

@CommandHandler(SubmitOrder)
export class SubmitOrderHandler implements ICommandHandler<SubmitOrder> {
  constructor(private readonly workflow: OrderWorkflow) {}

  execute({ input }: SubmitOrder): Promise<SubmitOrderResult> {
    return this.workflow.submit(input);
  }
}

@CommandHandler(SettleOrder)
export class SettleOrderHandler implements ICommandHandler<SettleOrder> {
  constructor(
    private readonly workflow: OrderWorkflow,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ orderNo }: SettleOrder): Promise<OrderState> {
    return this.workflow.decideOutcome(orderNo, { type: 'ConfirmDelivery', at: this.clock.now() });
  }
}

@CommandHandler(ReleaseFunds)
export class ReleaseFundsHandler implements ICommandHandler<ReleaseFunds> {
  constructor(
    private readonly workflow: OrderWorkflow,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ orderNo, failCode, failReason }: ReleaseFunds): Promise<OrderState> {
    return this.workflow.decideOutcome(orderNo, { type: 'RecordDeliveryFailure', failCode, failReason, at: this.clock.now() });
  }
}

@CommandHandler(MarkResultUnknown)
export class MarkResultUnknownHandler implements ICommandHandler<MarkResultUnknown> {
  constructor(
    private readonly workflow: OrderWorkflow,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ orderNo, reason, evidence }: MarkResultUnknown): Promise<OrderState> {
    return this.workflow.decideOutcome(orderNo, { type: 'MarkResultUnknown', reason, evidence, at: this.clock.now() });
  }
}

@CommandHandler(ResolveOrder)
export class ResolveOrderHandler implements ICommandHandler<ResolveOrder> {
  constructor(
    private readonly workflow: OrderWorkflow,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ orderNo, outcome, staffId, note }: ResolveOrder): Promise<OrderState> {
    return this.workflow.decideOutcome(orderNo, { type: 'ResolveOrder', outcome, resolvedBy: staffId, note, at: this.clock.now() });
  }
}

@CommandHandler(RecordUpstreamAttempt)
export class RecordUpstreamAttemptHandler implements ICommandHandler<RecordUpstreamAttempt> {
  constructor(
    private readonly workflow: OrderWorkflow,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  execute({ orderNo }: RecordUpstreamAttempt): Promise<OrderState> {
    return this.workflow.decideOutcome(orderNo, { type: 'RecordUpstreamAttempt', at: this.clock.now() });
  }
}
