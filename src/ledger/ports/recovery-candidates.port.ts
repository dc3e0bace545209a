/** Funds frozen for an order attempt. */
export interface HeldFunds {
  merchantId: string;
  orderNo: string;
  attempt: number;
}

/**
 * Where the process manager finds the orders a crash may have left between
 * two appends. The read models know them (projections/recovery-candidates.queries.ts);
 * the core only asks, and decides every action again from the streams, so a
 * stale or lagging answer is harmless.
 */
export interface RecoveryCandidates {
  /** Placed but neither accepted nor refused, or with an outcome decided but not settled, unchanged for graceMs. */
  stuckOrders(graceMs: number, limit: number): Promise<string[]>;
  /** Funds frozen more than graceMs ago for an attempt that is not the order's accepted one. */
  strayHolds(graceMs: number, limit: number): Promise<HeldFunds[]>;
}

export const RECOVERY_CANDIDATES = Symbol('RecoveryCandidates');
