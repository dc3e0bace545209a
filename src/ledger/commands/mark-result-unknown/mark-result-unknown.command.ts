import { Command } from '@nestjs/cqrs';
import { Loaded } from '../../command-handling';
import { OrderState } from '../../order/order.decider';

/** The upstream result is unknown: the funds stay frozen and the order waits in the reconciliation queue until staff resolve it (ResolveOrder). */
export class MarkResultUnknown extends Command<Loaded<OrderState>> {
  /** `known`: the order as the sender has just read it, or as its previous command returned it (saves a read; a stale one costs a conflict). */
  constructor(
    readonly orderNo: string,
    /** What the upstream said or did, for reconciliation staff. */
    readonly reason: string,
    readonly evidence?: string,
    readonly known?: Loaded<OrderState>,
  ) {
    super();
  }
}
