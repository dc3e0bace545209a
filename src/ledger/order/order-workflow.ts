import { EventStore, NO_STREAM, WrongExpectedRevisionError } from '../ports/event-store.port';
import { Clock } from '../../shared/clock';
import { CommandRefusedError } from '../../shared/command-refused';
import { Minor } from '../../shared/money';
import { handleCommand, loadAggregate, Loaded } from '../command-handling';
import { encodeEvent } from '../event-codec';
import { orderStream } from '../streams';
import { WalletWriter } from '../wallet/wallet-writer';
import { WalletCommand, WalletRefusalCode } from '../wallet/wallet.decider';
import { deriveOrderNo } from './order-number';
import { OrderCommand, orderDecider, OrderEvent, OrderState, OrderTarget } from './order.decider';

export interface SubmitOrderInput extends OrderTarget {
  merchantId: string;
  outTradeNo: string;
  amount: Minor;
  currency: string;
}

export type SubmitOrderResult =
  | { outcome: 'accepted' | 'duplicate'; order: OrderState }
  | { outcome: 'refused'; code: 'OUT_TRADE_NO_CONFLICT' | 'INSUFFICIENT_BALANCE' | 'WALLET_NOT_OPEN' | string; message: string };

/** An invariant broke: never a business outcome, always loud. */
export class LedgerInvariantError extends Error {
  override name = 'LedgerInvariantError';
}

const MAX_ROUNDS = 8;

/**
 * The steps of an order across its two streams. Each step is an idempotent
 * append, so any caller (the submitting request, a duplicate request, the
 * process manager after a crash) can drive an order forward from wherever it
 * stopped, and racing callers agree on the outcome.
 */
export class OrderWorkflow {
  constructor(
    private readonly store: EventStore,
    private readonly wallets: WalletWriter,
    private readonly clock: Clock,
  ) {}

  async submit(input: SubmitOrderInput): Promise<SubmitOrderResult> {
    const orderNo = deriveOrderNo(input.merchantId, input.outTradeNo);
    const { skuId, accountId, accountFields, merchantId, outTradeNo, amount, currency } = input;
    const place = (): PlaceOrder => ({
      type: 'PlaceOrder',
      order: { orderNo, merchantId, outTradeNo, skuId, accountId, accountFields, amount, currency, at: this.clock.now() },
    });
    // Most submits are new orders: try "no stream" first, read only on a conflict.
    const atOnce = this.wallets.takesCompanions;
    if (atOnce) {
      const result = await this.placeAtOnce(place());
      if (result) return result;
    }
    // Step by step: the order exists already, or the store appends one stream at a time.
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const guess = round === 0 && !atOnce ? { state: orderDecider.initialState(), revision: NO_STREAM } : undefined;
      const placed = await handleCommand(this.store, orderStream(orderNo), orderDecider, place(), guess);
      if (placed.decision.ok) {
        const attempt = placed.state.order!.attempt;
        const order = (await this.advance(orderNo, placed)).state;
        if (order.order!.attempt !== attempt) continue; // refused, then placed again by a concurrent duplicate
        if (order.stage === 'refused') return refusedAttempt(order);
        return { outcome: 'accepted', order };
      }
      if (placed.decision.refusal.code === 'OUT_TRADE_NO_CONFLICT') {
        return { outcome: 'refused', code: 'OUT_TRADE_NO_CONFLICT', message: placed.decision.refusal.message };
      }
      // The same order exists: finish it if it is half-way, then report it.
      const order = placed.state.stage === 'placed' ? (await this.advance(orderNo, placed)).state : placed.state;
      if (order.stage === 'refused') continue; // that attempt was refused: this request may place the next
      return { outcome: 'duplicate', order };
    }
    throw new Error(`order ${orderNo}: no stable outcome after ${MAX_ROUNDS} rounds of concurrent submits`);
  }

  /**
   * A new order placed, frozen and accepted in one atomic append to its own
   * and its wallet's stream, or placed and refused when the wallet cannot
   * pay. Undefined when the order's stream exists (a retry, a concurrent
   * duplicate): the step-by-step path then reports or finishes that order.
   */
  private async placeAtOnce(place: PlaceOrder): Promise<SubmitOrderResult | undefined> {
    const { orderNo, merchantId, amount } = place.order;
    const stream = orderStream(orderNo);
    const at = this.clock.now();
    // On a new stream the placement is attempt 1, and nothing refuses it or what follows it.
    const attempt = 1;
    const placedAnd = (next: OrderCommand) => decideAll(orderDecider.initialState(), [place, next])!;
    const accepted = placedAnd({ type: 'AcceptOrder', attempt, at });
    try {
      const freeze = await this.wallets.execute(
        merchantId,
        { type: 'FreezeFunds', orderNo, attempt, amount, at },
        { streamId: stream, expected: NO_STREAM, events: accepted.events.map((e) => encodeEvent(e)) },
      );
      if (freeze.decision.ok) return { outcome: 'accepted', order: accepted.state };
      const code = freeze.decision.refusal.code;
      if (!isPlacementRefusal(code)) return undefined;
      const refused = placedAnd({ type: 'RefuseOrder', attempt, code, at });
      await this.store.append(
        stream,
        refused.events.map((e) => encodeEvent(e)),
        NO_STREAM,
      );
      return refusedAttempt(refused.state);
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError && error.streamId === stream) return undefined;
      throw error;
    }
  }

  /**
   * An upstream or staff outcome, the wallet's deduction or release, and the
   * order's completion in one atomic append. Undefined when anything is not
   * as plain as that (a refusal, a repeat, a concurrent writer): the
   * step-by-step path then decides.
   */
  private async settleAtOnce(loaded: Loaded<OrderState>, command: OrderCommand): Promise<Loaded<OrderState> | undefined> {
    const decided = decideAll(loaded.state, [command]);
    if (!decided || (decided.state.stage !== 'succeeding' && decided.state.stage !== 'failing')) return undefined;
    const at = this.clock.now();
    const completed = decideAll(decided.state, [{ type: 'CompleteOrder', at }]);
    if (!completed) return undefined;
    const stream = orderStream(decided.state.order!.orderNo);
    try {
      const settled = await this.wallets.execute(decided.state.order!.merchantId, settlement(decided.state, at), {
        streamId: stream,
        expected: loaded.revision,
        events: [...decided.events, ...completed.events].map((e) => encodeEvent(e)),
      });
      return settled.decision.ok ? { state: completed.state, revision: settled.companion!.nextExpectedRevision } : undefined;
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError && error.streamId === stream) return undefined;
      throw error;
    }
  }

  /**
   * Completes whatever a crash or a concurrent caller left half-done: a placed
   * attempt is frozen and accepted (or refused), a decided outcome is deducted
   * or released and made final. Returns the order as it then stands, with
   * its stream's revision.
   */
  async advance(orderNo: string, known?: Loaded<OrderState>): Promise<Loaded<OrderState>> {
    let current = known ?? (await loadAggregate(this.store, orderStream(orderNo), orderDecider));
    for (let round = 0; round < MAX_ROUNDS; round++) {
      switch (current.state.stage) {
        case 'placed':
          current = await this.settlePlacement(current);
          continue;
        case 'succeeding':
        case 'failing':
          current = await this.settleOutcome(current);
          continue;
        default:
          return current;
      }
    }
    throw new Error(`order ${orderNo}: still moving after ${MAX_ROUNDS} rounds`);
  }

  /**
   * Records an upstream attempt, or an upstream or staff outcome and then
   * settles the wallet. `known`: the order as the caller has just read it
   * (a guess: the appends' expected revision catches a stale one). Returns
   * the order as it then stands and its stream's revision, which the caller
   * may pass on as `known` with its next outcome.
   */
  async decideOutcome(orderNo: string, command: OrderCommand, known?: Loaded<OrderState>): Promise<Loaded<OrderState>> {
    const loaded = known ?? (await loadAggregate(this.store, orderStream(orderNo), orderDecider));
    if (this.wallets.takesCompanions) {
      const settled = await this.settleAtOnce(loaded, command);
      if (settled) return settled;
    }
    const handled = await handleCommand(this.store, orderStream(orderNo), orderDecider, command, loaded);
    if (!handled.decision.ok && !isRepeatOf(command, handled.state)) {
      throw new CommandRefusedError(handled.decision.refusal.code, handled.decision.refusal.message);
    }
    return this.advance(orderNo, handled);
  }

  private async settlePlacement(order: Loaded<OrderState>): Promise<Loaded<OrderState>> {
    const { orderNo, merchantId, attempt, amount } = order.state.order!;
    const at = this.clock.now();
    const freeze = await this.wallets.execute(merchantId, { type: 'FreezeFunds', orderNo, attempt, amount, at });
    const refusal = freeze.decision.ok ? undefined : freeze.decision.refusal.code;
    const frozen = refusal === undefined || refusal === 'ALREADY_FROZEN';
    if (refusal !== undefined && !frozen && !isPlacementRefusal(refusal)) {
      throw new LedgerInvariantError(`freeze for ${orderNo}: ${refusal}`);
    }
    const command: OrderCommand = frozen ? { type: 'AcceptOrder', attempt, at } : { type: 'RefuseOrder', attempt, code: refusal!, at };
    const handled = await handleCommand(this.store, orderStream(orderNo), orderDecider, command, order);
    const accepted = handled.state.order?.attempt === attempt && !['placed', 'refused'].includes(handled.state.stage);
    // Funds frozen for an attempt that someone else refused, or that a newer
    // attempt replaced, are handed back at once.
    if (frozen && !accepted) await this.releaseStrayHold(merchantId, orderNo, attempt);
    return handled;
  }

  /** Releases funds frozen for an order attempt that was not accepted. */
  async releaseStrayHold(merchantId: string, orderNo: string, attempt: number): Promise<void> {
    const released = await this.wallets.execute(merchantId, {
      type: 'ReleaseFrozenFunds',
      orderNo,
      attempt,
      reason: 'ATTEMPT_NOT_ACCEPTED',
      at: this.clock.now(),
    });
    if (!released.decision.ok && released.decision.refusal.code === 'ALREADY_DEDUCTED') {
      throw new LedgerInvariantError(`order ${orderNo} attempt ${attempt} was deducted without being accepted`);
    }
  }

  private async settleOutcome(order: Loaded<OrderState>): Promise<Loaded<OrderState>> {
    const { state } = order;
    const { orderNo, merchantId } = state.order!;
    const at = this.clock.now();
    const success = state.stage === 'succeeding';
    const wallet = await this.wallets.execute(merchantId, settlement(state, at));
    const done: WalletRefusalCode = success ? 'ALREADY_DEDUCTED' : 'ALREADY_RELEASED';
    if (!wallet.decision.ok && wallet.decision.refusal.code !== done) {
      throw new LedgerInvariantError(`settling ${orderNo}: wallet refused with ${wallet.decision.refusal.code}`);
    }
    return handleCommand(this.store, orderStream(orderNo), orderDecider, { type: 'CompleteOrder', at }, order);
  }
}

type PlaceOrder = Extract<OrderCommand, { type: 'PlaceOrder' }>;

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

/** What a decided order does to its wallet: deduct on success, release on failure. */
function settlement(state: OrderState, at: string): WalletCommand {
  const { orderNo, attempt } = state.order!;
  return state.stage === 'succeeding'
    ? { type: 'DeductFrozenFunds', orderNo, attempt, at, ...(state.resolvedBy ? { reason: 'RESOLVED_SUCCESS' } : {}) }
    : { type: 'ReleaseFrozenFunds', orderNo, attempt, reason: state.failCode!, at };
}

function isPlacementRefusal(code: WalletRefusalCode): boolean {
  return code === 'INSUFFICIENT_BALANCE' || code === 'WALLET_NOT_OPEN';
}

function refusedAttempt(order: OrderState): SubmitOrderResult {
  const code = order.refusalCode ?? 'INSUFFICIENT_BALANCE';
  const message = code === 'INSUFFICIENT_BALANCE' ? 'The available balance is lower than the order amount' : 'The merchant wallet is not open';
  return { outcome: 'refused', code, message };
}

/** A retried outcome command whose outcome is already recorded is not an error. */
function isRepeatOf(command: OrderCommand, state: OrderState): boolean {
  const succeeded = state.stage === 'succeeding' || state.stage === 'succeeded';
  const failed = state.stage === 'failing' || state.stage === 'failed';
  switch (command.type) {
    case 'ConfirmDelivery':
      return succeeded;
    case 'RecordDeliveryFailure':
      return failed && state.failCode === command.failCode;
    case 'MarkResultUnknown':
      return state.stage === 'unknown';
    default:
      return false;
  }
}
