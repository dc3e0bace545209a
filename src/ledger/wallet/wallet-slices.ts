/**
 * A stream read a slice at a time, for replays of any length: the wallet
 * writer's load, the auditors' statements and checks.
 */
import { EventStore, ReplayedEvent } from '../ports/event-store.port';
import { walletStream } from '../streams';

/** Events read per round trip: a wallet of any length is replayed in slices this big. */
export const REPLAY_SLICE = 1000;

/** How slices are read: readStreamForReplay, readStreamForCheck for a check that needs no links or time, or readStreamForLoad for the wallet writer. */
export type SliceRead<E> = (streamId: string, fromRevision: bigint, maxCount: number) => Promise<E[]>;

/**
 * A wallet's events after revision `after`, a slice at a time (never an
 * empty one). A stream's revisions have no gaps, so every slice's range is
 * known in advance: from the second slice on, `ahead` more are read while
 * the caller works through the current one. A caller that needs one slice
 * (a page, a balance) pays for one read.
 */
export function walletSlices(
  store: EventStore,
  merchantId: string,
  after: bigint,
  options: { sliceSize?: number; ahead?: number } = {},
): AsyncGenerator<ReplayedEvent[]> {
  return streamSlices((...slice) => store.readStreamForReplay(...slice), walletStream(merchantId), after, options);
}

/** walletSlices for any stream, each slice read with `read` (the verification reads its wallet with readStreamForCheck). */
export async function* streamSlices<E>(
  read: SliceRead<E>,
  stream: string,
  after: bigint,
  { sliceSize = REPLAY_SLICE, ahead = 1 }: { sliceSize?: number; ahead?: number } = {},
): AsyncGenerator<E[]> {
  const readSlice = (index: number) => {
    const slice = read(stream, after + 1n + BigInt(index * sliceSize), sliceSize);
    // Awaited in turn; a caller that stops early must not leave an unhandled rejection behind.
    slice.catch(() => undefined);
    return slice;
  };
  const pending = [readSlice(0)];
  for (let index = 0; pending.length > 0; index++) {
    const slice = await pending.shift()!;
    const last = slice.length < sliceSize;
    if (!last && index > 0) while (pending.length < ahead) pending.push(readSlice(index + 1 + pending.length));
    if (slice.length > 0) yield slice;
    if (last) return;
    if (pending.length === 0) pending.push(readSlice(index + 1));
  }
}
