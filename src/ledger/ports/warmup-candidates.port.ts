/**
 * Which wallets to load before an instance takes requests: the read models
 * know which are long and in use (projections/warmup-candidates.queries.ts).
 * A stale answer only loads a wallet that did not need it, or leaves one to
 * be loaded by its first command.
 */
export interface WarmupCandidates {
  /** Up to `limit` merchants whose wallets were written in the last week, the longest first. */
  longestActiveWallets(limit: number): Promise<string[]>;
}

export const WARMUP_CANDIDATES = Symbol('WarmupCandidates');
