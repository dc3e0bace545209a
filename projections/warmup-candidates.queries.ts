import { Pool } from 'pg';
import { WarmupCandidates } from '../src/ledger/ports/warmup-candidates.port';

/** The wallets worth loading at start-up, from the wallets read model. */
export class ReadModelWarmupCandidates implements WarmupCandidates {
  constructor(private readonly pool: Pool) {}

  async longestActiveWallets(limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ merchant_id: string }>(
      `select merchant_id from rm_wallets where updated_at > now() - interval '7 days'
       order by revision desc, merchant_id limit $1`,
      [limit],
    );
    return rows.map((row) => row.merchant_id);
  }
}
