import { Command } from '@nestjs/cqrs';
import { Loaded } from '../../command-handling';
import { OrderState } from '../../order/order.decider';

/** Records that the order is being sent to the upstream, before it is sent: one event per send, and nothing is sent once the order moved on. */
export class RecordUpstreamAttempt extends Command<Loaded<OrderState>> {
  /** `known`: the order as the sender has just read it, or as its previous command returned it (saves a read; a stale one costs a conflict). */
  constructor(
    readonly orderNo: string,
    readonly known?: Loaded<OrderState>,
  ) {
    super();
  }
}
