import { comparePositions, EventStore, GlobalPosition, RecordedEvent } from '../infrastructure/event-store/event-store.port';
import { decodeEvent } from '../ledger/event-codec';
import { walletStream } from '../ledger/streams';
import { WalletEvent, walletMovement } from '../ledger/wallet/wallet.decider';
import { chainHash, GENESIS_HASH } from '../shared/hash-chain';
import { Minor } from '../shared/money';
import { readAhead } from './read-ahead';
import { SnapshotBound, WalletSnapshot, WalletSnapshots } from './wallet-snapshots';

/** Events read per round trip: a wallet of any length is replayed in slices this big. */
export const REPLAY_SLICE = 1000;

/** A wallet's running amounts and chain head after the event at `revision` (-1n: before its first event). */
export interface WalletTally {
  revision: bigint;
  position: GlobalPosition | null;
  balance: Minor;
  frozen: Minor;
  hash: string;
}

export const OPENING_TALLY: WalletTally = Object.freeze({ revision: -1n, position: null, balance: 0n, frozen: 0n, hash: GENESIS_HASH });

/** The tally after one more event. An event stored without its chain link gets the link it should have had. */
export function tallyAfter(tally: WalletTally, event: RecordedEvent, domain = decodeEvent<WalletEvent>(event)): WalletTally {
  const movement = walletMovement(domain);
  return {
    revision: event.revision,
    position: event.position,
    balance: tally.balance + movement.balance,
    frozen: tally.frozen + movement.frozen,
    hash: typeof event.metadata.hash === 'string' ? event.metadata.hash : chainHash(tally.hash, event.revision, event.type, event.data),
  };
}

export interface ReplayStart {
  tally: WalletTally;
  /** The snapshot the tally comes from, if one was used. */
  snapshot?: WalletSnapshot;
}

/**
 * Where to start replaying a wallet: the latest snapshot within `bound`, if
 * the log confirms it (its event has the snapshot's position and hash), else
 * the wallet's opening. The snapshot's amounts are taken as they are: the
 * verification replays every snapshot from the first event and names one
 * that is wrong.
 */
export async function replayStart(store: EventStore, snapshots: WalletSnapshots | undefined, merchantId: string, bound: SnapshotBound): Promise<ReplayStart> {
  const snapshot = await snapshots?.latest(merchantId, bound);
  if (!snapshot) return { tally: OPENING_TALLY };
  const [event] = await store.readStream(walletStream(merchantId), snapshot.revision, 1);
  const confirmed = event !== undefined && comparePositions(event.position, snapshot.position) === 0 && event.metadata.hash === snapshot.eventHash;
  if (!confirmed) return { tally: OPENING_TALLY };
  const { revision, position, balance, frozen, eventHash: hash } = snapshot;
  return { tally: { revision, position, balance, frozen, hash }, snapshot };
}

/**
 * A wallet's events after revision `after`, a slice at a time (never an
 * empty one). From the second slice on, the next is read while the caller
 * works through the current one.
 */
export async function* walletSlices(store: EventStore, merchantId: string, after: bigint, sliceSize = REPLAY_SLICE): AsyncGenerator<RecordedEvent[]> {
  const stream = walletStream(merchantId);
  const read = (from: bigint) => () => store.readStream(stream, from, sliceSize);
  const slices = readAhead(read(after + 1n), (slice) => (slice.length === sliceSize ? read(slice[slice.length - 1].revision + 1n) : undefined), {
    afterFirst: true,
  });
  for await (const slice of slices) if (slice.length > 0) yield slice;
}
