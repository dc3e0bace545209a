import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../../shared/clock';
import { EVENT_STORE, EventStore } from '../../ports/event-store.port';
import { handleCommand } from '../../command-handling';
import { CLOCK, ORDER_APPENDS } from '../../ledger.tokens';
import { LedgerInvariantError } from '../../ledger-invariant.error';
import { deriveOrderNo } from '../../order/order-number';
import { orderDecider, OrderState, PlacedOrderState } from '../../order/order.decider';
import { OrderAppends, PlaceOrder } from '../../order/order-appends';
import { OrderSteps } from '../../order/order-steps';
import { orderStream } from '../../streams';
import { SubmitOrder, SubmitOrderInput, SubmitOrderResult } from './submit-order.command';

/** Rounds of concurrent submits of one out_trade_no (refused, placed again, ...) before giving up loudly. */
const MAX_ROUNDS = 8;

@CommandHandler(SubmitOrder)
export class SubmitOrderHandler implements ICommandHandler<SubmitOrder, SubmitOrderResult> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(ORDER_APPENDS) private readonly appends: OrderAppends,
    private readonly steps: OrderSteps,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ input }: SubmitOrder): Promise<SubmitOrderResult> {
    const orderNo = deriveOrderNo(input.merchantId, input.outTradeNo);
    // Most submits are new orders: claim the stream first, read it only when it exists.
    const placedNew = await this.appends.placeNew(this.placement(orderNo, input));
    if (placedNew) return ownAttempt(placedNew.state);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const placed = await handleCommand(this.store, orderStream(orderNo), orderDecider, this.placement(orderNo, input));
      if (placed.decision.ok) {
        // The next attempt after a refused one: freeze and accept it, or refuse it too.
        const attempt = existing(placed.state).order.attempt;
        const order = existing((await this.steps.advance(orderNo, placed)).state);
        if (order.order.attempt !== attempt) continue; // refused, then placed again by a concurrent duplicate
        return ownAttempt(order);
      }
      if (placed.decision.refusal.code === 'OUT_TRADE_NO_CONFLICT') {
        return { outcome: 'refused', code: 'OUT_TRADE_NO_CONFLICT', message: placed.decision.refusal.message };
      }
      // The same order exists: finish it if it is half-way, then report it.
      const order = existing(placed.state.stage === 'placed' ? (await this.steps.advance(orderNo, placed)).state : placed.state);
      if (order.stage === 'refused') continue; // that attempt was refused: this request may place the next
      return { outcome: 'duplicate', order };
    }
    throw new Error(`order ${orderNo}: no stable outcome after ${MAX_ROUNDS} rounds of concurrent submits`);
  }

  private placement(orderNo: string, { merchantId, outTradeNo, skuId, accountId, accountFields, amount, currency }: SubmitOrderInput): PlaceOrder {
    return {
      type: 'PlaceOrder',
      order: { orderNo, merchantId, outTradeNo, skuId, accountId, accountFields, amount, currency, at: this.clock.now() },
    };
  }
}

/** The reply for this request's own attempt: accepted, or the wallet's refusal. */
function ownAttempt(order: OrderState): SubmitOrderResult {
  const placed = existing(order);
  if (placed.stage !== 'refused') return { outcome: 'accepted', order: placed };
  const code = placed.refusalCode;
  const message = code === 'INSUFFICIENT_BALANCE' ? 'The available balance is lower than the order amount' : 'The merchant wallet is not open';
  return { outcome: 'refused', code, message };
}

/** An order this handler has just placed or found placed. */
function existing(order: OrderState): PlacedOrderState {
  if (order.stage === 'none') throw new LedgerInvariantError('a placed order reads as never placed');
  return order;
}
