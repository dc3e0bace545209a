import { EventStore } from '../ports/event-store.port';
import { CommandRefusedError } from '../../shared/command-refused';
import { handleCommand, loadAggregate, Loaded } from '../command-handling';
import { orderStream } from '../streams';
import { OrderCommand, orderDecider, OrderState } from './order.decider';
import { OrderAppends } from './order-appends';
import { OrderSteps } from './order-steps';

export interface OutcomeOptions {
  /**
   * The order as the caller has just read it (a guess: the appends' expected
   * revision catches a stale one), which saves reading it again.
   */
  known?: Loaded<OrderState>;
  /** Whether the order as it stands already records this outcome: a retried command is not an error then. */
  isRepeat(state: OrderState): boolean;
}

/**
 * The one way an outcome reaches an order, shared by the outcome commands'
 * handlers: decided on the order and, when it settles the order, the money
 * moved and the order completed; in one append where the store can
 * (OrderAppends), step by step otherwise or when anything is not plain.
 */
export class OrderOutcomes {
  constructor(
    private readonly store: EventStore,
    private readonly appends: OrderAppends,
    private readonly steps: OrderSteps,
  ) {}

  /** Returns the order as it then stands and its revision, which the caller may pass on as `known` with its next outcome. */
  async record(orderNo: string, command: OrderCommand, { known, isRepeat }: OutcomeOptions): Promise<Loaded<OrderState>> {
    const loaded = known ?? (await loadAggregate(this.store, orderStream(orderNo), orderDecider));
    const settled = await this.appends.settleAtOnce(loaded, command);
    if (settled) return settled;
    const handled = await handleCommand(this.store, orderStream(orderNo), orderDecider, command, loaded);
    if (!handled.decision.ok && !isRepeat(handled.state)) {
      throw new CommandRefusedError(handled.decision.refusal.code, handled.decision.refusal.message);
    }
    return this.steps.advance(orderNo, handled);
  }
}
