import type { DashboardWindow } from './dashboard-window';

/**
 * The operations dashboard's reply (GET /admin/v1/operations/dashboard), as
 * DashboardReader builds it and the console draws it: a field renamed on
 * either side breaks the build. Counts are per slot of `step_seconds`, each
 * slot named by its start (UTC).
 */
export interface DashboardView {
  at: string;
  window: DashboardWindow;
  step_seconds: number;
  from: string;
  to: string;
  series: DashboardPointView[];
  now: DashboardNowView;
}

/** One slot of the window: orders by outcome, the upstream's sends and answers, the callbacks' results. */
export interface DashboardPointView {
  at: string;
  orders: { accepted: number; success: number; failed: number; unknown: number; refused: number; resolved: number };
  upstream: {
    sent: number;
    delivered: number;
    refused: number;
    unknown: number;
    retried: number;
    /** Null when the slot had no answers. */
    latency_ms: { p50: number | null; p99: number | null };
  };
  /** Null ratio when no attempt started in the slot has a result yet. */
  callbacks: { acknowledged: number; not_acknowledged: number; acknowledged_ratio: number | null };
}

/** The queues as they are now; an age is null when its queue is empty. */
export interface DashboardNowView {
  projections: { name: string; events_behind: number; events_behind_at_least: boolean; lag_seconds: number }[];
  fulfilment: { pending: number; oldest_age_seconds: number | null };
  callbacks: { pending: number; exhausted: number; oldest_pending_age_seconds: number | null };
  reconciliation: { unknown_result_orders: number; oldest_age_seconds: number | null; oldest_order_no: string | null };
  low_balance: { total: number; merchants: LowBalanceMerchantView[] };
}

/** A merchant whose available balance is under its threshold; amounts in its currency, two decimals. */
export interface LowBalanceMerchantView {
  merchant_id: string;
  name: string;
  currency: string;
  available_balance: string;
  low_balance_threshold: string;
}
