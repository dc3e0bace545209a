import { Pool } from 'pg';
import { GlobalPosition } from '../ledger/ports/event-store.port';
import { Minor } from '../shared/money';
import { latestSnapshotRow, SnapshotBound } from '../../projections/wallets.queries';

export type { SnapshotBound } from '../../projections/wallets.queries';

/**
 * A wallet as it stood after the event at `revision` (written by the wallets
 * projection, see WALLET_SNAPSHOT_INTERVAL), with what identifies that event
 * in the log: its global position, recorded time and chain hash.
 */
export interface WalletSnapshot {
  revision: bigint;
  position: GlobalPosition;
  recordedAt: Date;
  eventHash: string;
  balance: Minor;
  frozen: Minor;
}

export interface WalletSnapshots {
  latest(merchantId: string, bound: SnapshotBound): Promise<WalletSnapshot | undefined>;
}

/** The snapshots in the wallets projection's table, rm_wallet_snapshots. */
export class PostgresWalletSnapshots implements WalletSnapshots {
  constructor(private readonly pool: Pool) {}

  async latest(merchantId: string, bound: SnapshotBound): Promise<WalletSnapshot | undefined> {
    const row = await latestSnapshotRow(this.pool, merchantId, bound);
    if (!row) return undefined;
    return {
      revision: BigInt(row.r),
      position: { commit: BigInt(row.c), prepare: BigInt(row.p) },
      recordedAt: row.recorded_at,
      eventHash: row.event_hash,
      balance: BigInt(row.b),
      frozen: BigInt(row.f),
    };
  }
}
