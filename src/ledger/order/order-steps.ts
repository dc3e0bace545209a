import { EventStore } from '../ports/event-store.port';
import { Clock } from '../../shared/clock';
import { handleCommand, loadAggregate, Loaded } from '../command-handling';
import { LedgerInvariantError } from '../ledger-invariant.error';
import { orderStream } from '../streams';
import { WalletWriter } from '../wallet/wallet-writer';
import { WalletCommand, WalletRefusalCode } from '../wallet/wallet.decider';
import { DecidedOrderState, OrderCommand, orderDecider, OrderState } from './order.decider';

const MAX_ROUNDS = 8;

/**
 * The order's steps one stream at a time. Each step is an idempotent
 * append, so any caller (the submitting request, a duplicate request, an
 * outcome, the process manager after a crash) can drive an order forward
 * from wherever it stopped, and racing callers agree on the outcome.
 */
export class OrderSteps {
  constructor(
    private readonly store: EventStore,
    private readonly wallets: WalletWriter,
    private readonly clock: Clock,
  ) {}

  /**
   * Completes whatever a crash or a concurrent caller left half-done: a placed
   * attempt is frozen and accepted (or refused), a decided outcome is deducted
   * or released and made final. Returns the order as it then stands, with
   * its stream's revision.
   */
  async advance(orderNo: string, known?: Loaded<OrderState>): Promise<Loaded<OrderState>> {
    let current = known ?? (await loadAggregate(this.store, orderStream(orderNo), orderDecider));
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const { state } = current;
      switch (state.stage) {
        case 'placed':
          current = await this.settlePlacement({ state, revision: current.revision });
          continue;
        case 'succeeding':
        case 'failing':
          current = await this.settleOutcome({ state, revision: current.revision });
          continue;
        default:
          return current;
      }
    }
    throw new Error(`order ${orderNo}: still moving after ${MAX_ROUNDS} rounds`);
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

  private async settlePlacement(order: Loaded<Extract<OrderState, { stage: 'placed' }>>): Promise<Loaded<OrderState>> {
    const { orderNo, merchantId, attempt, amount } = order.state.order;
    const at = this.clock.now();
    const freeze = await this.wallets.execute(merchantId, { type: 'FreezeFunds', orderNo, attempt, amount, at });
    const refusal = freeze.decision.ok ? undefined : freeze.decision.refusal.code;
    let command: OrderCommand;
    if (refusal === undefined || refusal === 'ALREADY_FROZEN') command = { type: 'AcceptOrder', attempt, at };
    else if (isPlacementRefusal(refusal)) command = { type: 'RefuseOrder', attempt, code: refusal, at };
    else throw new LedgerInvariantError(`freeze for ${orderNo}: ${refusal}`);
    const handled = await handleCommand(this.store, orderStream(orderNo), orderDecider, command, order);
    const { state } = handled;
    const accepted = state.stage !== 'none' && state.order.attempt === attempt && state.stage !== 'placed' && state.stage !== 'refused';
    // Funds frozen for an attempt that someone else refused, or that a newer
    // attempt replaced, are handed back at once.
    if (command.type === 'AcceptOrder' && !accepted) await this.releaseStrayHold(merchantId, orderNo, attempt);
    return handled;
  }

  private async settleOutcome(order: Loaded<DecidedOrderState>): Promise<Loaded<OrderState>> {
    const { state } = order;
    const at = this.clock.now();
    const wallet = await this.wallets.execute(state.order.merchantId, settlement(state, at));
    const done: WalletRefusalCode = state.stage === 'succeeding' ? 'ALREADY_DEDUCTED' : 'ALREADY_RELEASED';
    if (!wallet.decision.ok && wallet.decision.refusal.code !== done) {
      throw new LedgerInvariantError(`settling ${state.order.orderNo}: wallet refused with ${wallet.decision.refusal.code}`);
    }
    return handleCommand(this.store, orderStream(state.order.orderNo), orderDecider, { type: 'CompleteOrder', at }, order);
  }
}

/** What a decided order does to its wallet: deduct on success, release on failure. */
export function settlement(state: DecidedOrderState, at: string): WalletCommand {
  const { orderNo, attempt } = state.order;
  if (state.stage === 'failing') return { type: 'ReleaseFrozenFunds', orderNo, attempt, reason: state.failCode, at };
  return { type: 'DeductFrozenFunds', orderNo, attempt, at, ...(state.resolvedBy ? { reason: 'RESOLVED_SUCCESS' } : {}) };
}

/** The wallet's refusals that refuse an order attempt (the merchant's submit gets them); any other is a broken invariant. */
export function isPlacementRefusal(code: WalletRefusalCode): code is 'INSUFFICIENT_BALANCE' | 'WALLET_NOT_OPEN' {
  return code === 'INSUFFICIENT_BALANCE' || code === 'WALLET_NOT_OPEN';
}
