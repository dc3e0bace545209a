import { decodeEvent } from '../src/ledger/event-codec';
import { OrderEvent } from '../src/ledger/order/order.decider';
import { RecordedEvent } from '../src/ledger/ports/event-store.port';
import { ORDER_STREAM_PREFIX, WALLET_STREAM_PREFIX } from '../src/ledger/streams';
import { WalletEvent } from '../src/ledger/wallet/wallet.decider';

/**
 * An event as projections take it: decoded (amounts are bigints), typed by
 * its stream, with the aggregate's id and where the log recorded it.
 */
export type LedgerEvent =
  | { readonly stream: 'order'; readonly orderNo: string; readonly event: OrderEvent; readonly recorded: RecordedEvent }
  | { readonly stream: 'wallet'; readonly merchantId: string; readonly event: WalletEvent; readonly recorded: RecordedEvent };

/** Every event type of each stream: a type added to a decider does not compile until it is listed here. */
const ORDER_EVENT_TYPES: Record<OrderEvent['type'], true> = {
  OrderPlaced: true,
  OrderAccepted: true,
  OrderRefused: true,
  OrderSentUpstream: true,
  OrderResultUnknown: true,
  OrderDeliveryConfirmed: true,
  OrderDeliveryFailed: true,
  OrderResolved: true,
  OrderSucceeded: true,
  OrderFailed: true,
};
const WALLET_EVENT_TYPES: Record<WalletEvent['type'], true> = {
  WalletOpened: true,
  FundsDeposited: true,
  FundsFrozen: true,
  FrozenFundsDeducted: true,
  FrozenFundsReleased: true,
  WalletAdjusted: true,
};

/**
 * The typed form of a recorded event; undefined for a stream no projection
 * reads. A type this code does not know in an order or wallet stream stops
 * the projections: applying the rest would leave the read models wrong.
 */
export function decodeLedgerEvent(recorded: RecordedEvent): LedgerEvent | undefined {
  if (recorded.streamId.startsWith(ORDER_STREAM_PREFIX)) {
    checkType(ORDER_EVENT_TYPES, recorded);
    return { stream: 'order', orderNo: recorded.streamId.slice(ORDER_STREAM_PREFIX.length), event: decodeEvent<OrderEvent>(recorded), recorded };
  }
  if (recorded.streamId.startsWith(WALLET_STREAM_PREFIX)) {
    checkType(WALLET_EVENT_TYPES, recorded);
    return { stream: 'wallet', merchantId: recorded.streamId.slice(WALLET_STREAM_PREFIX.length), event: decodeEvent<WalletEvent>(recorded), recorded };
  }
  return undefined;
}

function checkType(known: Record<string, true>, recorded: RecordedEvent): void {
  if (!Object.hasOwn(known, recorded.type)) throw new Error(`projections: unknown event type ${recorded.type} in ${recorded.streamId}`);
}
