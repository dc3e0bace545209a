import { Command } from '@nestjs/cqrs';
import { Loaded } from '../../command-handling';
import { DeliveryFailCode, OrderState } from '../../order/order.decider';

/** The upstream definitively refused, or was never reached: the frozen amount is released and the order fails with the fail code. */
export class ReleaseFunds extends Command<Loaded<OrderState>> {
  /** `known`: the order as the sender has just read it, or as its previous command returned it (saves a read; a stale one costs a conflict). */
  constructor(
    readonly orderNo: string,
    readonly failCode: DeliveryFailCode,
    readonly failReason: string,
    readonly known?: Loaded<OrderState>,
  ) {
    super();
  }
}
