import { EventStore, NO_STREAM, WrongExpectedRevisionError } from '../ports/event-store.port';
import { Clock } from '../../shared/clock';
import { Loaded } from '../command-handling';
import { encodeEvent } from '../event-codec';
import { orderStream } from '../streams';
import { LedgerInvariantError } from '../ledger-invariant.error';
import { WalletOutcome, WalletWriter } from '../wallet/wallet-writer';
import { isDecided, OrderCommand, orderDecider, OrderEvent, OrderState } from './order.decider';
import { isPlacementRefusal, OrderSteps, settlement } from './order-steps';

export type PlaceOrder = Extract<OrderCommand, { type: 'PlaceOrder' }>;

/**
 * How an order's step and the money it moves reach the log. Chosen once, by
 * what the store can do (orderAppendsFor): a store that appends to several
 * streams in one transaction takes an order's step and its wallet's events
 * together, all or nothing; one that cannot takes them one stream at a time,
 * and OrderSteps (or the process manager, after a crash) finishes an order
 * left between two appends. Either way the callers decide the same.
 */
export interface OrderAppends {
  /**
   * A new order (its first attempt) placed, and then frozen and accepted, or
   * refused when the wallet cannot pay. Undefined when the order's stream
   * exists already (a retry, a concurrent duplicate) or another request's
   * attempt took over: the caller then reads the stream and decides.
   */
  placeNew(place: PlaceOrder): Promise<Loaded<OrderState> | undefined>;
  /**
   * An upstream or staff outcome on a loaded order together with the
   * wallet's deduction or release and the order's completion, when the
   * outcome settles the order and nothing gets in the way. Undefined
   * otherwise (a refusal, a repeat, a concurrent writer, a step that moves
   * no money, or a store that appends one stream at a time): the caller
   * then takes the steps.
   */
  settleAtOnce(order: Loaded<OrderState>, command: OrderCommand): Promise<Loaded<OrderState> | undefined>;
}

export function orderAppendsFor(store: EventStore, wallets: WalletWriter, steps: OrderSteps, clock: Clock): OrderAppends {
  return wallets.takesCompanions ? new AtomicOrderAppends(store, wallets, clock) : new StepwiseOrderAppends(store, steps);
}

/** Each of an order's steps and its money in one atomic append to the order's and the wallet's streams. */
export class AtomicOrderAppends implements OrderAppends {
  constructor(
    private readonly store: EventStore,
    private readonly wallets: WalletWriter,
    private readonly clock: Clock,
  ) {}

  async placeNew(place: PlaceOrder): Promise<Loaded<OrderState> | undefined> {
    const { orderNo, merchantId, amount } = place.order;
    const stream = orderStream(orderNo);
    const at = this.clock.now();
    // On a new stream the placement is attempt 1, and nothing refuses it or what follows it.
    const attempt = 1;
    const placedAnd = (next: OrderCommand) => decideNew([place, next]);
    const accepted = placedAnd({ type: 'AcceptOrder', attempt, at });
    try {
      const freeze = await this.wallets.execute(
        merchantId,
        { type: 'FreezeFunds', orderNo, attempt, amount, at },
        { streamId: stream, expected: NO_STREAM, events: accepted.events.map((e) => encodeEvent(e)) },
      );
      if (freeze.decision.ok) return { state: accepted.state, revision: companionRevision(freeze) };
      const code = freeze.decision.refusal.code;
      if (!isPlacementRefusal(code)) return undefined;
      const refused = placedAnd({ type: 'RefuseOrder', attempt, code, at });
      const appended = await this.store.append(
        stream,
        refused.events.map((e) => encodeEvent(e)),
        NO_STREAM,
      );
      return { state: refused.state, revision: appended.nextExpectedRevision };
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError && error.streamId === stream) return undefined;
      throw error;
    }
  }

  async settleAtOnce(loaded: Loaded<OrderState>, command: OrderCommand): Promise<Loaded<OrderState> | undefined> {
    const decided = decideAll(loaded.state, [command]);
    if (!decided || !isDecided(decided.state)) return undefined;
    const at = this.clock.now();
    const completed = decideAll(decided.state, [{ type: 'CompleteOrder', at }]);
    if (!completed) return undefined;
    const { orderNo, merchantId } = decided.state.order;
    const stream = orderStream(orderNo);
    try {
      const settled = await this.wallets.execute(merchantId, settlement(decided.state, at), {
        streamId: stream,
        expected: loaded.revision,
        events: [...decided.events, ...completed.events].map((e) => encodeEvent(e)),
      });
      return settled.decision.ok ? { state: completed.state, revision: companionRevision(settled) } : undefined;
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError && error.streamId === stream) return undefined;
      throw error;
    }
  }
}

/** One stream at a time: the order's placement, then its wallet, then its acceptance (OrderSteps). */
export class StepwiseOrderAppends implements OrderAppends {
  constructor(
    private readonly store: EventStore,
    private readonly steps: OrderSteps,
  ) {}

  async placeNew(place: PlaceOrder): Promise<Loaded<OrderState> | undefined> {
    const stream = orderStream(place.order.orderNo);
    const placed = decideNew([place]);
    let revision: bigint;
    try {
      revision = (
        await this.store.append(
          stream,
          placed.events.map((e) => encodeEvent(e)),
          NO_STREAM,
        )
      ).nextExpectedRevision;
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError && error.streamId === stream) return undefined;
      throw error;
    }
    const order = await this.steps.advance(place.order.orderNo, { state: placed.state, revision });
    // Refused, then placed again by a concurrent duplicate: that request reports the new attempt.
    return order.state.stage !== 'none' && order.state.order.attempt === 1 ? order : undefined;
  }

  /** Every step is its own append here: the caller takes them. */
  async settleAtOnce(): Promise<undefined> {
    return undefined;
  }
}

/** decideAll on a new order, where nothing refuses a placement or what directly follows it. */
function decideNew(commands: readonly OrderCommand[]): { state: OrderState; events: OrderEvent[] } {
  const decided = decideAll(orderDecider.initialState(), commands);
  if (!decided) throw new LedgerInvariantError(`a new order refused ${commands.map((c) => c.type).join(', ')}`);
  return decided;
}

/** Where the order's events went in an atomic append that was decided with events. */
function companionRevision(outcome: WalletOutcome): bigint {
  if (!outcome.companion) throw new LedgerInvariantError('an atomic append returned no revision for the order');
  return outcome.companion.nextExpectedRevision;
}

/** The events of commands decided one after the other, and the state after them; undefined when one is refused. */
function decideAll(state: OrderState, commands: readonly OrderCommand[]): { state: OrderState; events: OrderEvent[] } | undefined {
  const events: OrderEvent[] = [];
  for (const command of commands) {
    const decision = orderDecider.decide(command, state);
    if (!decision.ok) return undefined;
    for (const event of decision.events) state = orderDecider.evolve(state, event);
    events.push(...decision.events);
  }
  return { state, events };
}
