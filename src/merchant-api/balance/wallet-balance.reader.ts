import { Pool } from 'pg';
import { EventStore } from '../../ledger/ports/event-store.port';
import { decodeEvent } from '../../ledger/event-codec';
import { withStreamTail } from '../../ledger/read-model-tail';
import { walletStream } from '../../ledger/streams';
import { WalletEvent } from '../../ledger/wallet/wallet.decider';
import { addMovement, NO_AMOUNTS, WalletAmounts } from '../../ledger/wallet/wallet-replay';
import { walletAmountsRow } from '../../../projections/wallets.queries';

/** A merchant's wallet amounts for the balance endpoint. */
export class WalletBalanceReader {
  constructor(
    private readonly pool: Pool,
    private readonly store: EventStore,
  ) {}

  /**
   * The read model (rm_wallets) as far as it goes, then the wallet's newer
   * events: a balance read straight after a 202 already shows that order's
   * freeze. A wallet the projection has not seen yet counts from nothing.
   */
  async amounts(merchantId: string): Promise<WalletAmounts> {
    const row = await walletAmountsRow(this.pool, merchantId);
    const projected = row
      ? { state: { balance: BigInt(row.balance), frozen: BigInt(row.frozen) }, revision: BigInt(row.revision) }
      : { state: NO_AMOUNTS, revision: -1n };
    const { state } = await withStreamTail(this.store, walletStream(merchantId), projected, (amounts, event) =>
      addMovement(amounts, decodeEvent<WalletEvent>(event)),
    );
    return state;
  }
}
