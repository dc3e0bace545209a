import { Pool } from 'pg';
import { GlobalPosition } from '../ledger/ports/event-store.port';
import { Minor } from '../shared/money';

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

/**
 * Where a replay may start: the latest snapshot whose event meets any one of
 * these (no bound at all: the latest snapshot).
 */
export interface SnapshotBound {
  revisionAtMost?: bigint;
  recordedBefore?: Date;
  recordedAtMost?: Date;
  positionAtMost?: GlobalPosition;
}

export interface WalletSnapshots {
  latest(merchantId: string, bound: SnapshotBound): Promise<WalletSnapshot | undefined>;
}

/** The snapshots in the wallets projection's table, rm_wallet_snapshots. */
export class PostgresWalletSnapshots implements WalletSnapshots {
  constructor(private readonly pool: Pool) {}

  async latest(merchantId: string, bound: SnapshotBound): Promise<WalletSnapshot | undefined> {
    const params: unknown[] = [merchantId];
    const param = (value: unknown) => `$${params.push(value)}`;
    const any: string[] = [];
    if (bound.revisionAtMost !== undefined) any.push(`revision <= ${param(bound.revisionAtMost.toString())}`);
    if (bound.recordedBefore) any.push(`recorded_at < ${param(bound.recordedBefore)}`);
    if (bound.recordedAtMost) any.push(`recorded_at <= ${param(bound.recordedAtMost)}`);
    if (bound.positionAtMost) {
      any.push(`(position_commit, position_prepare) <= (${param(bound.positionAtMost.commit.toString())}, ${param(bound.positionAtMost.prepare.toString())})`);
    }
    const { rows } = await this.pool.query<{ r: string; c: string; p: string; recorded_at: Date; event_hash: string; b: string; f: string }>(
      `select revision::text as r, position_commit::text as c, position_prepare::text as p, recorded_at, event_hash, balance::text as b, frozen::text as f
       from rm_wallet_snapshots where merchant_id = $1 ${any.length > 0 ? `and (${any.join(' or ')})` : ''}
       order by revision desc limit 1`,
      params,
    );
    if (rows.length === 0) return undefined;
    const [row] = rows;
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
