import { Command } from '@nestjs/cqrs';
import { Loaded } from '../command-handling';
import { OrderCommand, OrderState } from '../order/order.decider';

type Untimed<C> = C extends unknown ? Omit<C, 'at'> : never;

/** The order decider's commands that record an upstream or staff outcome; the workflow issues the others itself. */
export type OrderOutcome = Untimed<
  Extract<OrderCommand, { type: 'RecordUpstreamAttempt' | 'MarkResultUnknown' | 'ConfirmDelivery' | 'RecordDeliveryFailure' | 'ResolveOrder' }>
>;

/**
 * A bus command that is one of the order decider's outcome commands, under
 * the decider's name. Its handler (orderOutcomeHandler) adds the time and
 * lets the order workflow decide it and settle the wallet. `known` is the
 * order as the sender has just read it (or as the previous outcome command
 * returned it), which saves reading it again; a stale one costs a conflict
 * and a read. The result: the order as it then stands, with its revision.
 */
export abstract class OrderOutcomeCommand extends Command<Loaded<OrderState>> {
  protected constructor(
    readonly orderNo: string,
    readonly outcome: OrderOutcome,
    readonly known?: Loaded<OrderState>,
  ) {
    super();
  }
}
