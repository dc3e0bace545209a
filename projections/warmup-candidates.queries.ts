import { Pool } from 'pg';
import { WarmupCandidates } from '../src/ledger/ports/warmup-candidates.port';
import { longestActiveWallets } from './wallets.queries';

/** The wallets worth loading at start-up, from the wallets read model. */
export class ReadModelWarmupCandidates implements WarmupCandidates {
  constructor(private readonly pool: Pool) {}

  longestActiveWallets(limit: number): Promise<string[]> {
    return longestActiveWallets(this.pool, limit);
  }
}
