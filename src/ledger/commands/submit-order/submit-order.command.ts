import { Command } from '@nestjs/cqrs';
import { Minor } from '../../../shared/money';
import { OrderTarget, PlacedOrderState } from '../../order/order.decider';

export interface SubmitOrderInput extends OrderTarget {
  merchantId: string;
  outTradeNo: string;
  amount: Minor;
  currency: string;
}

export type SubmitOrderResult =
  | { outcome: 'accepted' | 'duplicate'; order: PlacedOrderState }
  | { outcome: 'refused'; code: 'OUT_TRADE_NO_CONFLICT' | 'INSUFFICIENT_BALANCE' | 'WALLET_NOT_OPEN' | string; message: string };

/**
 * A merchant's order: placed, its amount frozen on the wallet, accepted; or
 * refused when the wallet cannot pay. Idempotent on (merchant, out_trade_no):
 * the same request again reports the same order.
 */
export class SubmitOrder extends Command<SubmitOrderResult> {
  constructor(readonly input: SubmitOrderInput) {
    super();
  }
}
