/**
 * The auditors' replay of one wallet from the log: a slice of its stream at
 * a time, from its opening or a snapshot the log confirms, with the running
 * amounts and chain head (a tally) after every event. The fold itself is the
 * core's (src/ledger/wallet/wallet-replay.ts).
 */
import { comparePositions, EventStore, GlobalPosition, ReplayedEvent } from '../ledger/ports/event-store.port';
import { decodeEvent } from '../ledger/event-codec';
import { walletStream } from '../ledger/streams';
import { WalletEvent } from '../ledger/wallet/wallet.decider';
import { addMovement, NO_AMOUNTS, openingReplay, replayEvent, WalletAmounts, WalletReplay } from '../ledger/wallet/wallet-replay';
import { walletSlices } from '../ledger/wallet/wallet-slices';
import { SnapshotBound, WalletSnapshot, WalletSnapshots } from './wallet-snapshots.reader';

/** A wallet's running amounts and chain head after the event at `revision`, and that event's global position (null: before its first event). */
export interface WalletTally extends WalletReplay<WalletAmounts> {
  position: GlobalPosition | null;
}

export const OPENING_TALLY: WalletTally = Object.freeze({ ...openingReplay(NO_AMOUNTS), position: null });

/** The tally after one more event. */
export function tallyAfter(tally: WalletTally, event: ReplayedEvent, domain = decodeEvent<WalletEvent>(event)): WalletTally {
  return { ...replayEvent(tally, event, addMovement, domain), position: event.position };
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
  return { tally: { state: { balance, frozen }, revision, position, hash }, snapshot };
}

/** One event of a replay, with the tallies before and after it. */
export interface ReplayStep {
  event: ReplayedEvent;
  domain: WalletEvent;
  before: WalletTally;
  after: WalletTally;
}

/** A wallet's events after `start`, read a slice at a time, each with the tally it leaves. */
export async function* replayTallies(
  store: EventStore,
  merchantId: string,
  start: WalletTally,
  slices: { sliceSize?: number; ahead?: number } = {},
): AsyncGenerator<ReplayStep> {
  let tally = start;
  for await (const slice of walletSlices(store, merchantId, start.revision, slices)) {
    for (const event of slice) {
      const domain = decodeEvent<WalletEvent>(event);
      const before = tally;
      tally = tallyAfter(before, event, domain);
      yield { event, domain, before, after: tally };
    }
  }
}
