import { OrderOutcomeCommand } from '../../ledger/commands/order-outcome.command';
import { DeliveryFailCode } from '../../ledger/order/order.decider';

/** The upstream definitively refused, or was never reached: release the frozen amount, the order fails. */
export class RecordDeliveryFailure extends OrderOutcomeCommand {
  constructor(orderNo: string, failCode: DeliveryFailCode, failReason: string) {
    super(orderNo, { type: 'RecordDeliveryFailure', failCode, failReason });
  }
}
