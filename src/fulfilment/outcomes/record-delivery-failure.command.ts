import { Loaded } from '../../ledger/command-handling';
import { OrderOutcomeCommand } from '../../ledger/commands/order-outcome.command';
import { DeliveryFailCode, OrderState } from '../../ledger/order/order.decider';

/** The upstream definitively refused, or was never reached: release the frozen amount, the order fails. */
export class RecordDeliveryFailure extends OrderOutcomeCommand {
  constructor(orderNo: string, failCode: DeliveryFailCode, failReason: string, known?: Loaded<OrderState>) {
    super(orderNo, { type: 'RecordDeliveryFailure', failCode, failReason }, known);
  }
}
