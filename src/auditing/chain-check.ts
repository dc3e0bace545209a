import { EventStore } from '../ledger/ports/event-store.port';
import { walletStream } from '../ledger/streams';
import { brokenLink } from '../ledger/wallet/wallet-replay';
import { GENESIS_HASH } from '../shared/hash-chain';
import { walletSlices } from '../ledger/wallet/wallet-slices';

export interface ChainStatus {
  merchant_id: string;
  intact: boolean;
  events_checked: number;
  last_revision: number | null;
  last_hash: string | null;
  /** The first event whose link does not hold, and why; null when the chain is intact. */
  first_break: { revision: number; problem: string } | null;
}

/**
 * Walks a wallet's hash chain in the event store from its first event:
 * every event's prev_hash must be the hash before it, and its hash must be
 * recomputed from its revision, type and data. The same rule the offline
 * verify-statement applies to an exported file, applied to the log itself.
 * Undefined when the wallet does not exist.
 */
export async function checkWalletChain(store: EventStore, merchantId: string): Promise<ChainStatus | undefined> {
  const [first] = await store.readStream(walletStream(merchantId), 0n, 1);
  if (!first) return undefined;
  let previous = GENESIS_HASH;
  let checked = 0;
  let lastRevision: number | null = null;
  for await (const slice of walletSlices(store, merchantId, -1n)) {
    for (const event of slice) {
      const revision = Number(event.revision);
      const problem = brokenLink(previous, event);
      if (problem)
        return {
          merchant_id: merchantId,
          intact: false,
          events_checked: checked,
          last_revision: lastRevision,
          last_hash: previous,
          first_break: { revision, problem },
        };
      previous = event.metadata.hash as string;
      lastRevision = revision;
      checked++;
    }
  }
  return { merchant_id: merchantId, intact: true, events_checked: checked, last_revision: lastRevision, last_hash: previous, first_break: null };
}
