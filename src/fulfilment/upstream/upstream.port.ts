import { UpstreamFailCode } from '../../ledger/order/order.decider';

/** One top-up request to the upstream provider; `orderNo` is its idempotency key. */
export interface TopUpRequest {
  orderNo: string;
  skuId: string;
  route: string;
  accountId: string;
  accountFields: Record<string, string>;
  /** Two-decimal string, as on the wire. */
  amount: string;
  currency: string;
}

/**
 * Every way a top-up attempt can end. Only `delivered` and `refused` are
 * definitive; `retryable` means the upstream cannot have acted (the same key
 * may be sent again); `unknown` means it may have, so the money stays frozen
 * and the order goes to reconciliation staff.
 */
export type UpstreamOutcome =
  | { kind: 'delivered'; reference?: string }
  | { kind: 'refused'; failCode: UpstreamFailCode; failReason: string }
  | { kind: 'retryable'; reason: string }
  | { kind: 'unknown'; reason: string; evidence: string };

/**
 * What the upstream says about an earlier request, for reconciliation:
 * `pending` means it received the order and has no result yet; only
 * `not_received` says it never got it, so only that one argues for "failed".
 */
export type UpstreamStatus =
  | { kind: 'delivered'; reference?: string }
  | { kind: 'refused'; failCode: UpstreamFailCode; failReason: string }
  | { kind: 'pending' }
  | { kind: 'not_received' }
  | { kind: 'unknown'; reason: string; evidence: string };

export interface UpstreamProvider {
  topUp(request: TopUpRequest): Promise<UpstreamOutcome>;
  status(orderNo: string): Promise<UpstreamStatus>;
  /**
   * The upstream's transaction report for [from, to), as the bytes it sent
   * (CSV, docs/upstream-protocol.md). Throws UpstreamReportError, saying
   * why, when there is no whole report to give.
   */
  transactionReport(from: Date, to: Date): Promise<Buffer>;
  /** Closes its connections once the requests in flight have ended (on shutdown). */
  close?(): Promise<void>;
}

/** The transaction report's columns, in the order the upstream writes them (docs/upstream-protocol.md). */
export const REPORT_COLUMNS = ['order_no', 'status', 'amount', 'currency', 'reference', 'completed_at'] as const;

/** The most a transaction report may be, fetched or uploaded: 10 MiB. */
export const MAX_REPORT_BYTES = 10 * 1024 * 1024;

/** No transaction report came back: the upstream could not be reached, answered something else, or too much. */
export class UpstreamReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamReportError';
  }
}

export const UPSTREAM = Symbol('UpstreamProvider');
