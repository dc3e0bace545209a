import { accept, assertNever, Decider, Decision, refuse } from '../../shared/decider';
import { Minor } from '../../shared/money';
import { ForkableMap } from '../../shared/forkable-map';

// Events. Type strings are stable forever: they are stored in the event log.
export type WalletEvent =
  | { type: 'WalletOpened'; data: { merchantId: string; currency: string; at: string } }
  | { type: 'FundsDeposited'; data: { reference: string; amount: Minor; by: string; approvedBy?: string; at: string } }
  | { type: 'FundsFrozen'; data: { orderNo: string; attempt: number; amount: Minor; at: string } }
  | { type: 'FrozenFundsDeducted'; data: { orderNo: string; attempt: number; amount: Minor; reason?: string; at: string } }
  | { type: 'FrozenFundsReleased'; data: { orderNo: string; attempt: number; amount: Minor; reason: string; at: string } }
  | { type: 'WalletAdjusted'; data: WalletAdjustment & { by: string; approvedBy?: string; at: string } };

/**
 * A correction of the wallet's balance by staff, outside any order's hold:
 * for an order that became final and that the upstream's own report
 * contradicts (`orderNo`, the order it corrects), or for a mistake of
 * another kind. `reference` makes it idempotent; `reason` is a code, and an
 * order is corrected at most once for each reason.
 */
export interface WalletAdjustment {
  reference: string;
  direction: 'credit' | 'debit';
  amount: Minor;
  reason: string;
  note: string;
  orderNo?: string;
}

export type WalletCommand =
  | { type: 'OpenWallet'; merchantId: string; currency: string; at: string }
  /** `approvedBy`: the second person, when the four-eyes rule asked for one (also on AdjustWallet). */
  | { type: 'DepositFunds'; reference: string; amount: Minor; by: string; approvedBy?: string; at: string }
  | { type: 'FreezeFunds'; orderNo: string; attempt: number; amount: Minor; at: string }
  /** `reason` marks a deduction decided by staff (RESOLVED_SUCCESS) rather than by the upstream. */
  | { type: 'DeductFrozenFunds'; orderNo: string; attempt: number; reason?: string; at: string }
  | { type: 'ReleaseFrozenFunds'; orderNo: string; attempt: number; reason: string; at: string }
  | ({ type: 'AdjustWallet'; by: string; approvedBy?: string; at: string } & WalletAdjustment);

export type WalletRefusalCode =
  | 'WALLET_NOT_OPEN'
  | 'WALLET_ALREADY_OPEN'
  | 'INVALID_AMOUNT'
  | 'DEPOSIT_REFERENCE_CONFLICT'
  | 'INSUFFICIENT_BALANCE'
  | 'ALREADY_FROZEN'
  | 'ALREADY_DEDUCTED'
  | 'ALREADY_RELEASED'
  | 'NOT_FROZEN'
  | 'ADJUSTMENT_REFERENCE_CONFLICT'
  | 'ORDER_ALREADY_ADJUSTED';

/**
 * The key of an order attempt's claim on its wallet, wherever holds are
 * kept by key: the decider's state, the wallets projection, the
 * verification. NUL cannot occur in text Postgres stores, so no order
 * number or merchant id can make two holds' keys alike.
 */
export const holdKey = (orderNo: string, attempt: number) => `${orderNo}\u0000${attempt}`;

/** A hold's key among every merchant's holds: the merchant's id, then the hold's key. */
export const merchantHoldKey = (merchantId: string, hold: string) => `${merchantId}\u0000${hold}`;

/** What an adjustment did, to tell the same adjustment again (changes nothing) from another one under its reference. */
const adjustmentTerms = ({ direction, amount, reason, orderNo }: WalletAdjustment) => `${direction}\u0000${amount}\u0000${reason}\u0000${orderNo ?? ''}`;

/** An order's correction for one reason: at most one of each. */
const orderAdjustmentKey = (orderNo: string, reason: string) => `${orderNo}\u0000${reason}`;

/** A wallet before its WalletOpened: it holds nothing and takes nothing but an OpenWallet command. */
export interface UnopenedWallet {
  status: 'unopened';
}

export interface OpenedWallet {
  status: 'open';
  merchantId: string;
  currency: string;
  balance: Minor;
  frozen: Minor;
  /** Open holds: frozen and neither deducted nor released. */
  holds: ForkableMap<Minor>;
  /** Holds already deducted or released, and when: each happens at most once. */
  closedHolds: ForkableMap<ClosedHold>;
  /** Deposit references and their amounts, for idempotent deposits. */
  deposits: ForkableMap<Minor>;
  /** Adjustment references and what each did, for idempotent adjustments. */
  adjustments: ForkableMap<string>;
  /** The orders corrected, for each reason, and the adjustment that did it. */
  adjustedOrders: ForkableMap<string>;
}

export type WalletState = UnopenedWallet | OpenedWallet;

/** How a hold was closed, and the time its event carries. */
export interface ClosedHold {
  readonly closed: 'deducted' | 'released';
  readonly at: string;
}

const UNOPENED: UnopenedWallet = Object.freeze({ status: 'unopened' });

export const initialWalletState = (): WalletState => UNOPENED;

export const availableBalance = (wallet: OpenedWallet): Minor => wallet.balance - wallet.frozen;

const NOTHING_HELD = Object.freeze({ balance: 0n, frozen: 0n });

/** A wallet's balance and frozen amount: nothing before it is opened. */
export const amountsOf = (state: WalletState): { readonly balance: Minor; readonly frozen: Minor } => (state.status === 'open' ? state : NOTHING_HELD);

/** The wallet folded from at least one of its events, which is open: a wallet's first event opens it. */
export function openedWallet(state: WalletState): OpenedWallet {
  if (state.status !== 'open') throw new Error('the wallet has not been opened');
  return state;
}

/** How an event moves (balance, frozen): the arithmetic shared by evolve, projections and readers. */
export function walletMovement(event: WalletEvent): { balance: Minor; frozen: Minor } {
  switch (event.type) {
    case 'WalletOpened':
      return { balance: 0n, frozen: 0n };
    case 'FundsDeposited':
      return { balance: event.data.amount, frozen: 0n };
    case 'FundsFrozen':
      return { balance: 0n, frozen: event.data.amount };
    case 'FrozenFundsDeducted':
      return { balance: -event.data.amount, frozen: -event.data.amount };
    case 'FrozenFundsReleased':
      return { balance: 0n, frozen: -event.data.amount };
    case 'WalletAdjusted':
      return { balance: event.data.direction === 'credit' ? event.data.amount : -event.data.amount, frozen: 0n };
    default:
      return assertNever(event);
  }
}

type WalletDecision = Decision<WalletEvent, WalletRefusalCode>;

function decide(command: WalletCommand, state: WalletState): WalletDecision {
  if (command.type === 'OpenWallet') {
    if (state.status === 'open') return refuse('WALLET_ALREADY_OPEN', `wallet of ${state.merchantId} is already open`);
    return accept({ type: 'WalletOpened', data: { merchantId: command.merchantId, currency: command.currency, at: command.at } });
  }
  if (state.status !== 'open') return refuse('WALLET_NOT_OPEN', 'the wallet has not been opened');

  switch (command.type) {
    case 'DepositFunds': {
      if (command.amount <= 0n) return refuse('INVALID_AMOUNT', 'a deposit must be positive');
      const earlier = state.deposits.get(command.reference);
      if (earlier !== undefined) {
        // The same deposit again changes nothing; the same reference for another amount is a mistake.
        return earlier === command.amount ? accept() : refuse('DEPOSIT_REFERENCE_CONFLICT', `reference ${command.reference} was used for another amount`);
      }
      const { reference, amount, by, approvedBy, at } = command;
      // No key for an absent approver: the stored data, and the hash that covers it, hold what was decided.
      return accept({ type: 'FundsDeposited', data: approvedBy === undefined ? { reference, amount, by, at } : { reference, amount, by, approvedBy, at } });
    }
    case 'FreezeFunds': {
      const key = holdKey(command.orderNo, command.attempt);
      if (command.amount <= 0n) return refuse('INVALID_AMOUNT', 'a freeze must be positive');
      if (state.holds.has(key) || state.closedHolds.has(key)) {
        return refuse('ALREADY_FROZEN', `funds for order ${command.orderNo} were already frozen`);
      }
      if (command.amount > availableBalance(state)) {
        return refuse('INSUFFICIENT_BALANCE', 'the available balance is lower than the order amount');
      }
      const { orderNo, attempt, amount, at } = command;
      return accept({ type: 'FundsFrozen', data: { orderNo, attempt, amount, at } });
    }
    case 'DeductFrozenFunds':
    case 'ReleaseFrozenFunds': {
      const key = holdKey(command.orderNo, command.attempt);
      const amount = state.holds.get(key);
      if (amount === undefined) {
        const closed = state.closedHolds.get(key)?.closed;
        if (closed === 'deducted') return refuse('ALREADY_DEDUCTED', `funds for order ${command.orderNo} were already deducted`);
        if (closed === 'released') return refuse('ALREADY_RELEASED', `funds for order ${command.orderNo} were already released`);
        return refuse('NOT_FROZEN', `no funds are frozen for order ${command.orderNo}`);
      }
      const { orderNo, attempt, at } = command;
      return command.type === 'DeductFrozenFunds'
        ? accept({
            type: 'FrozenFundsDeducted',
            data: command.reason === undefined ? { orderNo, attempt, amount, at } : { orderNo, attempt, amount, reason: command.reason, at },
          })
        : accept({ type: 'FrozenFundsReleased', data: { orderNo, attempt, amount, reason: command.reason, at } });
    }
    case 'AdjustWallet':
      return decideAdjustment(command, state);
    default:
      return assertNever(command);
  }
}

function decideAdjustment(command: Extract<WalletCommand, { type: 'AdjustWallet' }>, state: OpenedWallet): WalletDecision {
  const { type: _type, by, approvedBy, at, ...adjustment } = command;
  if (adjustment.amount <= 0n) return refuse('INVALID_AMOUNT', 'an adjustment must be positive');
  const earlier = state.adjustments.get(adjustment.reference);
  if (earlier !== undefined) {
    // The same adjustment again changes nothing; the same reference for another one is a mistake.
    return earlier === adjustmentTerms(adjustment)
      ? accept()
      : refuse('ADJUSTMENT_REFERENCE_CONFLICT', `reference ${adjustment.reference} was used for another adjustment`);
  }
  if (adjustment.orderNo !== undefined) {
    const by = state.adjustedOrders.get(orderAdjustmentKey(adjustment.orderNo, adjustment.reason));
    if (by !== undefined) return refuse('ORDER_ALREADY_ADJUSTED', `order ${adjustment.orderNo} was already adjusted for ${adjustment.reason} (${by})`);
  }
  // A debit may take the available balance to zero, never below: frozen funds belong to orders in flight.
  if (adjustment.direction === 'debit' && adjustment.amount > availableBalance(state)) {
    return refuse('INSUFFICIENT_BALANCE', 'the available balance is lower than the debit');
  }
  const { orderNo, ...rest } = adjustment;
  // No key for an absent order or approver: the stored data, and the hash that covers it, hold what was decided.
  return accept({
    type: 'WalletAdjusted',
    data: { ...rest, ...(orderNo === undefined ? {} : { orderNo }), by, ...(approvedBy === undefined ? {} : { approvedBy }), at },
  });
}

/**
 * A wallet after any of its events is open: WalletOpened opens it, and no
 * other event can come first. The collections are ForkableMaps: a fold
 * changes them in place, a batch decided on a forked wallet changes its
 * fork alone (forkWallet).
 */
function evolve(state: WalletState, event: WalletEvent): OpenedWallet {
  if (event.type === 'WalletOpened') {
    const { merchantId, currency } = event.data;
    if (state.status === 'open') return { ...state, merchantId, currency };
    return {
      status: 'open',
      merchantId,
      currency,
      balance: 0n,
      frozen: 0n,
      holds: ForkableMap.empty(),
      closedHolds: ForkableMap.empty(),
      deposits: ForkableMap.empty(),
      adjustments: ForkableMap.empty(),
      adjustedOrders: ForkableMap.empty(),
    };
  }
  // A broken log, not a business refusal: decide never moves money in a wallet that is not open.
  if (state.status !== 'open') throw new Error(`${event.type} in a wallet that was never opened`);
  let { holds, closedHolds, deposits, adjustments, adjustedOrders } = state;
  switch (event.type) {
    case 'FundsDeposited':
      deposits = deposits.with(event.data.reference, event.data.amount);
      break;
    case 'FundsFrozen':
      holds = holds.with(holdKey(event.data.orderNo, event.data.attempt), event.data.amount);
      break;
    case 'FrozenFundsDeducted':
    case 'FrozenFundsReleased': {
      const key = holdKey(event.data.orderNo, event.data.attempt);
      holds = holds.without(key);
      closedHolds = closedHolds.with(key, { closed: event.type === 'FrozenFundsDeducted' ? 'deducted' : 'released', at: event.data.at });
      break;
    }
    case 'WalletAdjusted': {
      const { reference, orderNo, reason } = event.data;
      adjustments = adjustments.with(reference, adjustmentTerms(event.data));
      if (orderNo !== undefined) adjustedOrders = adjustedOrders.with(orderAdjustmentKey(orderNo, reason), reference);
      break;
    }
    default:
      return assertNever(event);
  }
  const delta = walletMovement(event);
  // Every field spelled out: replays run this once per event, and a literal of fixed shape costs a fraction of a spread.
  return {
    status: 'open',
    merchantId: state.merchantId,
    currency: state.currency,
    balance: state.balance + delta.balance,
    frozen: state.frozen + delta.frozen,
    holds,
    closedHolds,
    deposits,
    adjustments,
    adjustedOrders,
  };
}

/**
 * The wallet to decide a batch of commands on: its collections forked, so
 * that the wallet given reads as before whatever the batch's events do to
 * the fork. O(1); an unopened wallet has nothing to fork.
 */
export function forkWallet(state: WalletState): WalletState {
  if (state.status !== 'open') return state;
  return {
    ...state,
    holds: state.holds.fork(),
    closedHolds: state.closedHolds.fork(),
    deposits: state.deposits.fork(),
    adjustments: state.adjustments.fork(),
    adjustedOrders: state.adjustedOrders.fork(),
  };
}

/**
 * A forked wallet on its own again, once its batch is written: the fork's
 * changes go into the collections it was forked from, in O(changes), and
 * the wallet it was forked from is superseded.
 */
export function settleWallet(state: WalletState): WalletState {
  if (state.status !== 'open') return state;
  return {
    ...state,
    holds: state.holds.settled(),
    closedHolds: state.closedHolds.settled(),
    deposits: state.deposits.settled(),
    adjustments: state.adjustments.settled(),
    adjustedOrders: state.adjustedOrders.settled(),
  };
}

/**
 * Forgets, in place, the closed holds of a settled wallet that closed before
 * `cutoffMs`, oldest first, and returns the latest closing time among them
 * (undefined when it forgot none). A wallet that forgot some decides as
 * before except on those holds: deducting or releasing one is refused
 * NOT_FROZEN, and freezing one again is not refused. A caller that keeps
 * wallets (WalletWriter) therefore decides such commands on the wallet read
 * whole.
 */
export function forgetClosedHolds(state: WalletState, cutoffMs: number): number | undefined {
  if (state.status !== 'open') return undefined;
  let latest: number | undefined;
  state.closedHolds.forgetOldestWhile((hold) => {
    const at = Date.parse(hold.at);
    if (!(at < cutoffMs)) return false;
    latest = latest === undefined ? at : Math.max(latest, at);
    return true;
  });
  return latest;
}

/** `satisfies`, not a type: a reader that folds events knows from `evolve` that the wallet is open. */
export const walletDecider = {
  initialState: initialWalletState,
  evolve,
  decide,
} satisfies Decider<WalletState, WalletCommand, WalletEvent, WalletRefusalCode>;
