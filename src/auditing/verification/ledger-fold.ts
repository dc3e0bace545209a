import { CheckedEvent, comparePositions, formatPosition, GlobalPosition, START } from '../../ledger/ports/event-store.port';
import { decodeEvent } from '../../ledger/event-codec';
import { failureOf, isFinal, OrderEvent, orderDecider, OrderState } from '../../ledger/order/order.decider';
import { ORDER_STREAM_PREFIX, WALLET_STREAM_PREFIX } from '../../ledger/streams';
import { holdKey, merchantHoldKey, WalletEvent, walletDecider, WalletState } from '../../ledger/wallet/wallet.decider';
import { EventReference, referenceOf, Row } from './differences';
import { lineDigestText } from './line-digest';

export interface Checkpoints {
  orders: GlobalPosition;
  wallets: GlobalPosition;
}

/** The wallet replayed so far, up to the event at `revision`, and the events behind its rows. */
export interface WalletFacts {
  state: WalletState;
  revision: bigint;
  opened?: CheckedEvent;
  /** The wallet's last event: the one the projection last wrote the row for. */
  last?: CheckedEvent;
  openedRevision: number;
  /** The events that froze the open holds. */
  holdsBy: Map<string, CheckedEvent>;
  /** What closed the holds the read model still lists: it explains those rows. */
  closedBy: Map<string, CheckedEvent>;
}

/** What a snapshot takes from its event in the log: its time as the snapshot records it (null: no such event), and its hash (null when it has none). */
export interface SnapshotEventFacts {
  recordedAt: string | null;
  eventHash: string | null;
}

export interface OrderFacts {
  orderNo: string;
  state: OrderState;
  lastBy: EventReference;
  placedBy: EventReference;
  failBy?: EventReference;
  /** The projection writes fail_code on OrderDeliveryFailed and OrderFailed, not on a staff resolution. */
  failCodeWritten: boolean;
}

/**
 * The rows the wallets projection writes for one wallet event. Kept as the
 * raw amounts: a clean batch needs only each line's digest text, so the rows
 * themselves are built only when there is a difference to show.
 */
export class ExpectedWalletRows {
  constructor(
    readonly merchantId: string,
    readonly event: CheckedEvent,
    /** Whether the event has a statement line (all but WalletOpened). */
    readonly hasLine: boolean,
    private readonly orderNo: string | null,
    private readonly amount: bigint,
    private readonly balance: bigint,
    private readonly frozen: bigint,
  ) {}

  get revision(): number {
    return Number(this.event.revision);
  }

  get by(): EventReference {
    return referenceOf(this.event);
  }

  /** The statement line's text in the digest of its wallet's lines. */
  lineDigestText(): string {
    const { position } = this.event;
    return lineDigestText(this.event.revision, this.event.type, this.orderNo, this.amount, this.balance, this.frozen, `${position.commit}/${position.prepare}`);
  }

  line(): Row {
    const { balance, frozen } = this;
    return {
      entry_type: this.event.type,
      order_no: this.orderNo,
      amount: this.amount.toString(),
      balance_after: balance.toString(),
      frozen_after: frozen.toString(),
      available_after: (balance - frozen).toString(),
      position: formatPosition(this.event.position),
    };
  }

  /** The wallet after this event, as a snapshot here must record it. */
  snapshot(event: SnapshotEventFacts): Row {
    return {
      position: formatPosition(this.event.position),
      recorded_at: event.recordedAt,
      event_hash: event.eventHash,
      balance: this.balance.toString(),
      frozen: this.frozen.toString(),
    };
  }
}

/**
 * What the log says each row should be, and which event said it, folded with
 * the deciders' own evolve. Only events up to each projection's checkpoint
 * count: later ones are not differences yet.
 *
 * Memory stays flat however long the log: per wallet only its amounts and
 * open holds are kept, an order leaves the fold as soon as it is final
 * (nothing can follow), and the rows each batch of events implies are handed
 * out to be compared batch by batch.
 */
export class LedgerFold {
  readonly wallets = new Map<string, WalletFacts>();
  /** Orders not final yet. */
  readonly orders = new Map<string, OrderFacts>();
  events = 0;
  last: GlobalPosition = START;
  private walletRows: ExpectedWalletRows[] = [];
  private settled: OrderFacts[] = [];
  /** The wallet of the last wallet event: a wallet's events mostly come in runs (all of them, for one wallet's check). */
  private lastWallet?: { streamId: string; merchantId: string; facts: WalletFacts };

  /** `listedHolds`: the keys (merchantHoldKey) of the hold rows the read model lists. */
  constructor(
    private readonly checkpoints: Checkpoints,
    private readonly listedHolds: ReadonlySet<string>,
  ) {}

  /** Whether the event is one the fold counts: a wallet or order event the projection has applied. */
  apply(event: CheckedEvent): boolean {
    if (event.streamId.startsWith(WALLET_STREAM_PREFIX)) {
      if (comparePositions(event.position, this.checkpoints.wallets) > 0) return false;
      this.applyWallet(event);
    } else if (event.streamId.startsWith(ORDER_STREAM_PREFIX)) {
      if (comparePositions(event.position, this.checkpoints.orders) > 0) return false;
      this.applyOrder(event.streamId.slice(ORDER_STREAM_PREFIX.length), event);
    } else {
      return false;
    }
    this.events++;
    if (comparePositions(event.position, this.last) > 0) this.last = event.position;
    return true;
  }

  /** The statement line and snapshot rows of the wallet events applied since the last call. */
  takeWalletRows(): ExpectedWalletRows[] {
    return this.walletRows.splice(0);
  }

  /** The orders that became final since the last call: their rows can no longer change. */
  takeSettledOrders(): OrderFacts[] {
    return this.settled.splice(0);
  }

  private walletOf(streamId: string): { merchantId: string; facts: WalletFacts } {
    if (this.lastWallet?.streamId === streamId) return this.lastWallet;
    const merchantId = streamId.slice(WALLET_STREAM_PREFIX.length);
    let facts = this.wallets.get(merchantId);
    if (!facts) {
      facts = { state: walletDecider.initialState(), revision: -1n, openedRevision: -1, holdsBy: new Map(), closedBy: new Map() };
      this.wallets.set(merchantId, facts);
    }
    this.lastWallet = { streamId, merchantId, facts };
    return this.lastWallet;
  }

  private applyWallet(recorded: CheckedEvent): void {
    const { merchantId, facts } = this.walletOf(recorded.streamId);
    const event = decodeEvent<WalletEvent>(recorded);
    const state = (facts.state = walletDecider.evolve(facts.state, event));
    facts.revision = recorded.revision;
    // Only amounts and open holds are compared; the decider's memory of closed
    // holds and deposit references would grow with the log.
    state.closedHolds.clear();
    state.deposits.clear();
    state.adjustments.clear();
    state.adjustedOrders.clear();
    facts.last = recorded;
    const { balance, frozen } = state;
    if (event.type === 'WalletOpened') {
      facts.opened = recorded;
      facts.openedRevision = Number(recorded.revision);
      this.walletRows.push(new ExpectedWalletRows(merchantId, recorded, false, null, 0n, balance, frozen));
      return;
    }
    const orderNo = event.type === 'FundsDeposited' ? null : (event.data.orderNo ?? null);
    if (event.type === 'FundsFrozen') facts.holdsBy.set(holdKey(event.data.orderNo, event.data.attempt), recorded);
    if (event.type === 'FrozenFundsDeducted' || event.type === 'FrozenFundsReleased') {
      const key = holdKey(event.data.orderNo, event.data.attempt);
      facts.holdsBy.delete(key);
      if (this.listedHolds.has(merchantHoldKey(merchantId, key))) facts.closedBy.set(key, recorded);
    }
    this.walletRows.push(new ExpectedWalletRows(merchantId, recorded, true, orderNo, event.data.amount, balance, frozen));
  }

  private applyOrder(orderNo: string, recorded: CheckedEvent): void {
    const by = referenceOf(recorded);
    const event = decodeEvent<OrderEvent>(recorded);
    const previous = this.orders.get(orderNo);
    const state = orderDecider.evolve(previous?.state ?? orderDecider.initialState(), event);
    const facts: OrderFacts = previous ? { ...previous, state, lastBy: by } : { orderNo, state, lastBy: by, placedBy: by, failCodeWritten: false };
    if (event.type === 'OrderPlaced') Object.assign(facts, { placedBy: by, failBy: undefined, failCodeWritten: false });
    if (event.type === 'OrderDeliveryFailed' || event.type === 'OrderFailed') Object.assign(facts, { failBy: by, failCodeWritten: true });
    if (event.type === 'OrderResolved' && event.data.outcome === 'failed') Object.assign(facts, { failBy: by, failCodeWritten: false });
    if (isFinal(state)) {
      this.orders.delete(orderNo);
      this.settled.push(facts);
    } else {
      this.orders.set(orderNo, facts);
    }
  }
}

/** The rm_orders row an order's events imply, and the event behind each column. */
export function expectedOrderRow(facts: OrderFacts): { row: Row; explainers: Record<string, EventReference> } {
  const { state } = facts;
  if (state.stage === 'none') throw new Error(`order ${facts.orderNo} has events but was never placed`);
  const placed = state.order;
  return {
    row: {
      merchant_id: placed.merchantId,
      stage: state.stage,
      attempt: placed.attempt,
      amount: placed.amount.toString(),
      fail_code: facts.failCodeWritten ? (failureOf(state)?.failCode ?? null) : null,
    },
    explainers: {
      merchant_id: facts.placedBy,
      attempt: facts.placedBy,
      amount: facts.placedBy,
      stage: facts.lastBy,
      fail_code: facts.failBy ?? facts.lastBy,
    },
  };
}
