import { Command } from '@nestjs/cqrs';
import { Loaded } from '../../command-handling';
import { OrderState } from '../../order/order.decider';

/** The upstream delivered: the frozen amount is deducted and the order succeeds. */
export class SettleOrder extends Command<Loaded<OrderState>> {
  /** `known`: the order as the sender has just read it, or as its previous command returned it (saves a read; a stale one costs a conflict). */
  constructor(
    readonly orderNo: string,
    readonly known?: Loaded<OrderState>,
  ) {
    super();
  }
}
